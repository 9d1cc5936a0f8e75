"""Security measurements of the domain: the leak hunt (``leak_hunt``)."""
