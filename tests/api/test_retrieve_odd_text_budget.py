"""With odd content (emoji, CJK, Korean, Thai, Arabic, combining marks, a long word, markup,
newlines, a control character) a retrieval's reported prompt tokens equal the model
tokenizer's count of the prompt it answers, stay within ``max_tokens``, and no item is cut or
given twice (stop 58's audit of retrieval found it so; kept so that a change shows)."""

import pytest

from memory_core.embeddings import get_embedder
from memory_core.principals import SystemPrincipal
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.factories import SubjectFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/retrieve"

CONTENTS = [
    "User prefers dark mode 🌙🌙 in every editor 👩‍💻.",
    "사용자는 한국어로 된 답변을 선호합니다.",
    "用户喜欢简洁的回答，不要太长。",
    "L'utilisateur préfère le café noir — sans sucre.",
    "User's favourite word is " + "a" * 150 + " really.",
    "Uses <b>bold</b> & \"quotes\" & 'single' <script>x</script>.",
    "Line one of a preference.\nLine two:\ttabbed\r\nline three.",
    "Zero\u200bwidth\u200djoiners and e\u0301 combining and \ufb01 ligature.",
    "ผู้ใช้ชอบอาหารไทยรสเผ็ด",
    "المستخدم يفضل القهوة العربية",
    "\u0301starts with a combining mark; user likes tea.",
    "Ends with control \x07 char and likes tea.",
]


@pytest.fixture
def odd(tenant):
    me = SubjectFactory(tenant=tenant, external_id="dana")
    drafts = [
        MemoryDraft(
            subject=me,
            memory_type="user_preference",
            content=c,
            authority="explicit_user",
            source_type="user_input",
        )
        for c in CONTENTS
    ]
    return memory_store_many(drafts=drafts, principal=SystemPrincipal(tenant_id=tenant.id))


@pytest.mark.parametrize("max_tokens", [16, 60, 150, 2000])
@pytest.mark.parametrize("query", ["What does the user prefer?", "한국어", "🌙"])
def test_the_prompt_s_tokens_are_counted_exactly_and_kept_within_the_budget(
    api_client, odd, max_tokens, query
):
    r = api_client.post(
        URL,
        {
            "query": query,
            "context": {"user_id": "dana"},
            "budget": {"max_tokens": max_tokens, "max_items": 100, "max_items_per_type": 100},
        },
        format="json",
    )
    assert r.status_code == 200, r.content
    d = r.json()
    n = get_embedder().count_tokens(d["prompt"])
    assert d["prompt_tokens"] == n, (d["prompt_tokens"], n, d["prompt"])
    assert n <= max_tokens
    for it in d["items"]:
        assert d["prompt"].count(it["id"]) == 1
