"""ScwoHSCAMiddleware in LangChain's real agent loop (``create_agent``), with a fake chat model that
records what it is sent, on a real conversation: the Python FAQ's questions as the user's turns and
its answer paragraphs as the assistant's (``load_faq``, PSF licence)."""

import asyncio

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from scwo_np.datasets import load_faq
from scwo_np.hsca import SnapshotStore
from scwo_np.integrations.langchain import ScwoHSCAMiddleware
from scwo_np.text import split_sentences
from scwo_np.tokens import count_tokens

SYSTEM = "You are a helpful assistant who answers questions about Python."
TURNS = 30  # FAQ questions in the conversation: about 6,100 tokens


class RecordingFake(GenericFakeChatModel):
    """GenericFakeChatModel that keeps every list of messages it is sent (system prompt included)."""

    seen: list = []

    def bind_tools(self, tools, **kw):  # the script already names the tools it calls
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.seen.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def _model(*replies):
    return RecordingFake(messages=iter(replies), seen=[])


@pytest.fixture(scope="module")
def faq():
    return load_faq()


def _answer(faq, q):
    return " ".join(faq.texts[i] for i in faq.gold[q])


def _conversation(faq, n=TURNS):
    out = []
    for q in range(n):
        out += [HumanMessage(faq.questions[q]), AIMessage(_answer(faq, q))]
    return out


def _answer_sentences(faq, q):
    return [faq.texts[i][a:b] for i in faq.gold[q] for a, b in split_sentences(faq.texts[i])]


def _shape(messages):
    return [(type(m).__name__, m.content) for m in messages]


def _tokens(text, counter="estimate"):
    return int(count_tokens([text], counter)[0])


def _pairs_whole(messages):
    """Every tool message follows the AI message that called it, and every call has its result."""
    called, answered = {}, set()
    for k, m in enumerate(messages):
        if isinstance(m, AIMessage):
            called.update({c["id"]: k for c in m.tool_calls})
        if isinstance(m, ToolMessage):
            assert m.tool_call_id in called, f"tool message {m.tool_call_id} without its call"
            answered.add(m.tool_call_id)
    assert set(called) <= answered, f"calls without their results: {set(called) - answered}"


@pytest.mark.parametrize("counter", ["estimate", "wordpiece"])
def test_the_model_reads_the_system_prompt_one_context_within_budget_and_the_kept_messages(faq, counter):
    q = 3  # "Why was Python created in the first place?", answered 27 exchanges earlier
    question = HumanMessage(f"Remind me: {faq.questions[q].lower()}")
    history = [*_conversation(faq), question]
    model = _model(AIMessage("Because of frustrations with ABC."))
    mw = ScwoHSCAMiddleware(budget=300, trigger=2000, keep=4, token_counter=counter)
    agent = create_agent(model, tools=[], system_prompt=SYSTEM, middleware=[mw])
    out = agent.invoke({"messages": history})["messages"]
    (seen,) = model.seen
    assert isinstance(seen[0], SystemMessage) and seen[0].content == SYSTEM
    ctx = seen[1]
    assert isinstance(ctx, HumanMessage) and ctx.additional_kwargs == {"lc_source": "scwo_hsca"}
    assert _tokens(ctx.content, counter) <= 300 and ctx.response_metadata["scwo"]["tokens"] <= 300
    assert _shape(seen[2:]) == _shape(history[-4:])  # the newest messages, verbatim
    assert any(s in ctx.content for s in _answer_sentences(faq, q))  # the earlier answer surfaced
    assert ctx.response_metadata["scwo"]["turns"] == len(history) - 4  # each older message one turn
    assert "[turn " in ctx.content and ctx.response_metadata["scwo"]["citations"]
    # the agent's state is the replacement too: the context, the kept messages, the reply
    assert _shape(out) == _shape([ctx, *history[-4:], AIMessage("Because of frustrations with ABC.")])


def test_earlier_answers_surface_for_most_questions(faq):
    """Every earlier question asked again at the end: the context (300 tokens of a ~6,100-token
    conversation) holds a sentence of its answer for most of them."""
    history = _conversation(faq)
    mw = ScwoHSCAMiddleware(budget=300, trigger=2000, keep=4)
    found = []
    for q in range(TURNS - 2):  # the last two exchanges are kept verbatim
        update = mw.replace([*history, HumanMessage(faq.questions[q])], session="faq")
        (ctx,) = [m for m in update["messages"] if m.additional_kwargs.get("lc_source") == "scwo_hsca"]
        assert _tokens(ctx.content) <= 300
        found.append(any(s in ctx.content for s in _answer_sentences(faq, q)))
    assert mw.memory("faq").context(None, 10).turns == len(history) - 3  # ingested once, not 28 times
    assert sum(found) >= 0.75 * len(found), found


def test_async_invoke_is_the_same_replacement(faq):
    history = [*_conversation(faq, 20), HumanMessage("What is the Python Software Foundation?")]
    runs = []
    for asynchronous in (False, True):
        model = _model(AIMessage("The PSF."))
        mw = ScwoHSCAMiddleware(budget=250, trigger=1500, keep=3)
        agent = create_agent(model, tools=[], system_prompt=SYSTEM, middleware=[mw])
        inputs = {"messages": [m.model_copy() for m in history]}
        if asynchronous:
            asyncio.run(agent.ainvoke(inputs))
        else:
            agent.invoke(inputs)
        runs.append(_shape(model.seen[0]))
    assert runs[0] == runs[1] and len(runs[0]) == 1 + 1 + 3
    assert any(s in runs[1][1][1] for s in _answer_sentences(load_faq(), 1))


def test_below_the_trigger_nothing_changes(faq):
    history = [*_conversation(faq, 3), HumanMessage("What is Python good for?")]
    model = _model(AIMessage("Many things."))
    mw = ScwoHSCAMiddleware(budget=300, trigger=5000, keep=2)
    agent = create_agent(model, tools=[], system_prompt=SYSTEM, middleware=[mw])
    out = agent.invoke({"messages": history})["messages"]
    assert _shape(model.seen[0]) == _shape([SystemMessage(SYSTEM), *history])
    assert _shape(out) == _shape([*history, AIMessage("Many things.")])
    assert mw.memory().context(None, 100).turns == 0


def _tool_history(faq):
    """Real text through tool calls: the assistant looks answers up, several calls per message."""
    out = []
    for k, q in enumerate(range(0, 12, 2)):
        ids = [f"c{k}a", f"c{k}b"]
        out += [
            HumanMessage(faq.questions[q]),
            AIMessage(
                "",
                tool_calls=[
                    {"name": "faq", "args": {"question": faq.questions[q + j]}, "id": ids[j]}
                    for j in range(2)
                ],
            ),  # fmt: skip
            *[ToolMessage(_answer(faq, q + j), tool_call_id=ids[j], name="faq") for j in range(2)],
            AIMessage(f"From the FAQ: {faq.texts[faq.gold[q][0]][:120]}"),
        ]
    return out


@tool
def faq_tool(question: str) -> str:
    """The Python FAQ's answer to a question."""
    faq = load_faq()
    q = faq.questions.index(question) if question in faq.questions else 0
    return _answer(faq, q)


def test_a_cut_never_splits_a_tool_call_from_its_results(faq):
    history = [*_tool_history(faq), HumanMessage("And which of those is about copyright?")]
    for keep in range(1, len(history)):
        model = _model(AIMessage("The third."))
        mw = ScwoHSCAMiddleware(budget=200, trigger=500, keep=keep)
        agent = create_agent(model, tools=[faq_tool], system_prompt=SYSTEM, middleware=[mw])
        agent.invoke({"messages": [m.model_copy() for m in history]})
        (seen,) = model.seen
        _pairs_whole(seen)
        rest = [m for m in seen[1:] if m.additional_kwargs.get("lc_source") != "scwo_hsca"]
        assert len(rest) >= min(keep, len(history))  # at least the newest `keep`, more to keep a pair
        assert _shape(rest) == _shape(history[len(history) - len(rest) :])


def test_tool_pairs_stay_whole_while_the_agent_loops(faq):
    """The fake model calls the FAQ tool three times (each result a real answer), and the history
    passes the trigger inside the loop: every model call sees whole pairs; the loop finishes."""
    qs = [faq.questions[i] for i in (2, 5, 9)]
    calls = [AIMessage("", tool_calls=[{"name": "faq_tool", "args": {"question": q}, "id": f"t{i}"}])
             for i, q in enumerate(qs)]  # fmt: skip
    model = _model(*calls, AIMessage("Done."))
    mw = ScwoHSCAMiddleware(budget=120, trigger=250, keep=2)
    agent = create_agent(model, tools=[faq_tool], system_prompt=SYSTEM, middleware=[mw])
    out = agent.invoke(
        {"messages": [HumanMessage("Look up copyright, Python's uses and its version numbers.")]}
    )
    assert out["messages"][-1].content == "Done." and len(model.seen) == 4
    for seen in model.seen:
        _pairs_whole(seen)
        assert sum(m.additional_kwargs.get("lc_source") == "scwo_hsca" for m in seen) <= 1
    assert any(m.additional_kwargs.get("lc_source") == "scwo_hsca" for m in model.seen[-1])
    assert model.seen[-1][-1].content == _answer(faq, 9)  # the newest tool result, verbatim


def test_a_new_agent_on_the_same_store_recalls_the_earlier_turns(faq, tmp_path):
    store = tmp_path / "memory.sqlite"
    history = [*_conversation(faq), HumanMessage("Thanks, that is all for today.")]
    first = create_agent(_model(AIMessage("Bye.")), tools=[], system_prompt=SYSTEM, middleware=[
        ScwoHSCAMiddleware(budget=300, trigger=2000, keep=4, store=store, session="alice")])  # fmt: skip
    first.invoke({"messages": history})
    assert "alice" in SnapshotStore(store).sessions()

    # "restart": a new middleware and a new agent on the same file, a new conversation
    model = _model(AIMessage("Because of ABC."))
    mw = ScwoHSCAMiddleware(budget=300, trigger=2000, keep=4, store=store, session="alice")
    agent = create_agent(model, tools=[], system_prompt=SYSTEM, middleware=[mw])
    question = HumanMessage("Why was Python created in the first place?")
    agent.invoke({"messages": [question]})
    (seen,) = model.seen
    assert _shape(seen[::2]) == _shape([SystemMessage(SYSTEM), question])
    ctx = seen[1]
    assert ctx.additional_kwargs == {"lc_source": "scwo_hsca"} and _tokens(ctx.content) <= 300
    assert any(s in ctx.content for s in _answer_sentences(faq, 3))
    assert mw.memory("alice").context(None, 10).turns == len(history) - 4
    # the whole first conversation passed again after the restart: nothing is ingested twice
    again = create_agent(_model(AIMessage("Bye.")), tools=[], middleware=[mw])
    again.invoke(
        {"messages": [{"role": m.type.replace("human", "user"), "content": m.content} for m in history]}
    )
    assert mw.memory("alice").context(None, 10).turns == len(history) - 4

    # another session on the same store knows nothing
    other = _model(AIMessage("?"))
    create_agent(
        other, tools=[], middleware=[ScwoHSCAMiddleware(budget=300, store=store, session="bob")]
    ).invoke({"messages": [question]})
    assert _shape(other.seen[0]) == _shape([question])


def test_with_a_checkpointer_each_message_is_ingested_once(faq):
    from langgraph.checkpoint.memory import InMemorySaver

    replies = [AIMessage(_answer(faq, q)) for q in range(12)]
    model = _model(*replies)
    mw = ScwoHSCAMiddleware(budget=200, trigger=900, keep=4)
    agent = create_agent(model, tools=[], system_prompt=SYSTEM, middleware=[mw], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}
    for q in range(12):
        state = agent.invoke({"messages": [HumanMessage(faq.questions[q])]}, config)
        ours = [m for m in state["messages"] if m.additional_kwargs.get("lc_source") == "scwo_hsca"]
        assert len(ours) <= 1 and all(_tokens(m.content) <= 200 for m in ours)
        _pairs_whole(state["messages"])
    turns = mw.memory("t1").context(None, 10).turns
    shown = [m for m in state["messages"] if m.additional_kwargs.get("lc_source") != "scwo_hsca"]
    assert turns + len(shown) == 24  # every message either in the memory (once) or in the state
    assert mw.memory("t1") is not mw.memory()  # one engine per thread


def test_with_a_checkpointer_each_new_question_gets_a_context_made_for_it(faq):
    """After a replacement the kept history is below the trigger, so the next questions arrive
    without one: each still gets a context made for it (it got the context of the question that
    set off the replacement, answering none of the recall questions of a new user's trial)."""
    from langgraph.checkpoint.memory import InMemorySaver

    recall = [0, 2, 4]
    model = _model(*[AIMessage(_answer(faq, q)) for q in range(14)], *[AIMessage("Yes.")] * len(recall))
    mw = ScwoHSCAMiddleware(budget=300, trigger=2500, keep=4)
    agent = create_agent(model, tools=[], system_prompt=SYSTEM, middleware=[mw], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "chat"}}
    for q in range(14):
        agent.invoke({"messages": [HumanMessage(faq.questions[q])]}, config)
    found = 0
    for q in recall:
        asked = "Remind me: " + faq.questions[q]
        agent.invoke({"messages": [HumanMessage(asked)]}, config)
        (context,) = [m for m in model.seen[-1] if m.additional_kwargs.get("lc_source") == "scwo_hsca"]
        assert context.response_metadata["scwo"]["query"] == asked
        assert _tokens(context.content) <= 300
        found += any(s in context.content for s in _answer_sentences(faq, q))
    assert found >= 2, found
    # the next model call of the same question (a tool loop's) keeps the context it has
    assert mw.replace(agent.get_state(config).values["messages"], session="chat") is None


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({}, TypeError, "budget is required"),
        ({"budget": 0}, ValueError, "budget"),
        ({"budget": 10, "keep": -1}, ValueError, "keep"),
        ({"budget": 10, "trigger": ("fraction", 0.5)}, ValueError, "trigger"),
        ({"budget": 10, "trigger": "many"}, TypeError, "trigger"),
        ({"budget": 10, "session": "a/b"}, ValueError, "session"),
        ({"budget": 10, "store": 3}, TypeError, "store"),
        ({"budget": 10, "embedder": "lsa"}, ValueError, "embedder"),
        ({"budget": 10, "recent": 2.0}, ValueError, "recent"),
        (
            {"budget": 3000, "trigger": 1500},
            ValueError,
            r"budget \(3000\) must be below trigger \(1500 tokens\)",
        ),
    ],
)
def test_bad_arguments_are_named(kwargs, err, match):
    with pytest.raises(err, match=match):
        ScwoHSCAMiddleware(**kwargs)
