"""The filesystem broker (config/broker.py): a message is in its queue whole, or not at all."""

import errno
from pathlib import Path

import pytest
from kombu import Connection

import config.broker as broker
from config.settings.base import filesystem_broker_options

MESSAGE = {"body": "x" * 400, "properties": {}}


class _FillingHandle:
    """A file handle on a disk that fills up: the first ``room`` bytes go in, then ENOSPC."""

    def __init__(self, handle, room: int):
        self._handle = handle
        self._room = room

    def write(self, data):
        if len(data) > self._room:
            self._handle.write(data[: self._room])
            self._room = 0
            raise OSError(errno.ENOSPC, "No space left on device")
        self._room -= len(data)
        return self._handle.write(data)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._handle.close()
        return False


def test_a_message_sent_on_a_full_disk_leaves_no_partial_file_in_the_queue(tmp_path, monkeypatch):
    """Stop 63's audit of failure behaviour found that ``Channel._put``, on a full disk, left
    the part of the message it had written under ``.tmp-<name>`` in the queue folder: no
    queue reads that name and nothing removed it, so every send the deletion sweep retried
    while the disk was full left another. Now the failed write's temporary file is removed
    (``files.removed_on_failure``) and the error reaches the sender; once the disk has room,
    the message goes in whole and is read back."""
    options = filesystem_broker_options(tmp_path / "broker")
    queue_folder = Path(options["data_folder_in"])
    real_open = open

    def open_on_a_full_disk(path, mode="r", *args, **kwargs):
        handle = real_open(path, mode, *args, **kwargs)
        return _FillingHandle(handle, room=16) if "w" in mode else handle

    with Connection(
        "filesystem://", transport="config.broker:Transport", transport_options=options
    ) as connection:
        channel = connection.default_channel
        with monkeypatch.context() as full_disk:
            full_disk.setattr(broker, "open", open_on_a_full_disk, raising=False)
            with pytest.raises(OSError) as raised:
                channel._put("memledger", MESSAGE)
        assert raised.value.errno == errno.ENOSPC
        assert sorted(queue_folder.iterdir()) == []

        channel._put("memledger", MESSAGE)
        assert channel._get("memledger") == MESSAGE
