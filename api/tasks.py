"""``POST /api/v1/tasks/close``: a task is done, and what was bound to it expires."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from api.fields import IdField
from api.memories_serializers import StrictSerializer
from api.parsing import QueryStringChecked
from api.responses import AGENT_BODY, SUBJECT_NOT_GRANTED
from api.throttling import SpendsNoWriteQuota
from memory_core.admission.candidate import HARD_MAX_ID_CHARS
from memory_core.services.tasks import task_close


class TaskCloseInput(StrictSerializer):
    user_id = IdField(max_length=HARD_MAX_ID_CHARS)
    task_id = IdField(max_length=HARD_MAX_ID_CHARS)


class TaskCloseOutput(serializers.Serializer):
    task_id = serializers.CharField()
    expired = serializers.ListField(child=serializers.CharField())
    outside_grant = serializers.IntegerField()


class TaskCloseView(QueryStringChecked, SpendsNoWriteQuota, APIView):
    """Expire the subject's memories bound to the task: what is scoped to it (``task:<id>``)
    and the task state and decisions carrying its ``task_id`` (``tasks.bound_to_task``). An
    unknown subject or task expires nothing (200)."""

    @extend_schema(
        request=TaskCloseInput,
        responses={
            200: TaskCloseOutput,
            **AGENT_BODY,
            403: SUBJECT_NOT_GRANTED,
        },
    )
    def post(self, request):
        body = TaskCloseInput(data=request.data)
        body.is_valid(raise_exception=True)
        result = task_close(principal=request.user, **body.validated_data)
        return Response(TaskCloseOutput(result).data)
