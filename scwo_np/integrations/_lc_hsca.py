"""The LangChain v1 middleware that keeps a conversation within a token budget with HSCA's context.

:class:`ScwoHSCAMiddleware` is LangChain's ``SummarizationMiddleware`` without the model call:
when the history passes ``trigger`` tokens, the messages older than the ``keep`` newest go into
an :class:`~scwo_np.hsca.HSCAEngine` (each once) and are replaced by one message holding
``engine.context(query=<the latest human message>, budget=...)``: the cited sentences of earlier
turns the map ranks highest for the new question, and the newest turns.  Public through
:mod:`scwo_np.integrations.langchain`, which imports LangChain; this module imports it too.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from ..hsca import HSCAEngine, SnapshotStore
from ..tokens import as_token_counter, count_tokens
from ..validation import check_budget, check_int, check_unit_interval

__all__ = ["ScwoHSCAMiddleware"]

#: ``additional_kwargs["lc_source"]`` of the context message (LangChain marks its summary
#: ``"summarization"`` the same way): how the middleware knows its own message again.
SOURCE = "scwo_hsca"

#: The line before the context's blocks (counted inside ``budget``).
HEADER = "Excerpts of the earlier conversation, by turn:"
_UNKNOWN = object()  # the question of a context message made before it was recorded


@dataclass
class _Memory:
    """One session's engine, the fingerprints of the turns it holds, and what the store has."""

    engine: HSCAEngine
    seen: set[str] = field(default_factory=set)
    saved: int = 0  # snapshots already written to the store
    lock: threading.Lock = field(default_factory=threading.Lock)


def _fingerprint(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _ours(message: Any) -> bool:
    return isinstance(message, HumanMessage) and message.additional_kwargs.get("lc_source") == SOURCE


def _text(message: Any) -> str:
    """The message's text (its text blocks joined; images and other blocks left out)."""
    content = message.content
    if isinstance(content, str):
        return content
    return message.text if isinstance(content, list) else str(content)


def render(message: Any) -> str:
    """The message as one turn of text: its role, its text, and the tools an AI message called.

    Parameters
    ----------
    message : BaseMessage
        A LangChain message.

    Returns
    -------
    str
        ``"User: ..."``, ``"Assistant: ..."`` (with ``[called name({args})]`` per tool call),
        ``"Tool name: ..."``; ``""`` when the message holds no text.
    """
    text = _text(message).strip()
    if isinstance(message, HumanMessage):
        return f"User: {text}" if text else ""
    if isinstance(message, AIMessage):
        calls = [f"[called {c.get('name')}({json.dumps(c.get('args', {}), ensure_ascii=False)})]"
                 for c in message.tool_calls]  # fmt: skip
        body = " ".join([text, *calls]).strip()
        return f"Assistant: {body}" if body else ""
    if isinstance(message, ToolMessage):
        return (f"Tool {message.name}: {text}" if message.name else f"Tool: {text}") if text else ""
    if isinstance(message, SystemMessage):
        return f"System: {text}" if text else ""
    return f"{message.type.capitalize()}: {text}" if text else ""


def safe_cut(messages: Sequence[Any], cut: int) -> int:
    """``cut`` moved back so that no AI message with tool calls is split from its tool messages.

    A cut that lands on a :class:`ToolMessage` moves back to the AI message that called it (as
    LangChain's ``SummarizationMiddleware`` does), so the pair is kept whole; with no such AI
    message it moves forward past the tool messages (they would be orphans).

    Parameters
    ----------
    messages : sequence of BaseMessage
        The conversation.
    cut : int
        The first message to keep.

    Returns
    -------
    int
        The first message to keep, at a safe place.
    """
    if cut <= 0 or cut >= len(messages) or not isinstance(messages[cut], ToolMessage):
        return max(cut, 0)
    ids, end = set(), cut
    while end < len(messages) and isinstance(messages[end], ToolMessage):
        ids.add(messages[end].tool_call_id)
        end += 1
    for i in range(cut - 1, -1, -1):
        m = messages[i]
        if isinstance(m, AIMessage) and {c.get("id") for c in m.tool_calls} & ids:
            return i
    return end


def _size(value: object, name: str) -> tuple[str, int]:
    """``trigger=`` / ``keep=``: an int, or LangChain's ``("tokens", n)`` / ``("messages", n)``."""
    kind = "tokens" if name == "trigger" else "messages"
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        kind, value = value
        allowed = ("tokens", "messages") if name == "trigger" else ("messages",)
        if kind not in allowed:
            raise ValueError(
                f"{name} must be an int or one of {[(k, 'n') for k in allowed]}; got kind {kind!r}."
            )
    elif isinstance(value, tuple):
        raise TypeError(f"{name} must be an int or a (kind, int) pair as LangChain writes it; got {value!r}.")
    return kind, check_int(value, name=name, low=1 if name == "trigger" else 0, high=2**62, clamp=True)


class ScwoHSCAMiddleware(AgentMiddleware):
    """Replace a long history's older messages with HSCA's context for the latest message, no LLM call.

    Before each model call, when the conversation's messages count more than ``trigger``
    tokens (each message as a turn of text: its role, its text, the tools it called; by
    ``token_counter``), the messages older than the ``keep`` newest are ingested into the
    session's :class:`~scwo_np.hsca.HSCAEngine`, one turn each, and the agent's state is
    rewritten (``RemoveMessage(REMOVE_ALL_MESSAGES)``, as LangChain's
    ``SummarizationMiddleware`` does) to: the leading system messages, **one** message
    holding ``engine.context(query=<the latest human message's text>, budget=...)`` (the
    cited sentences of earlier turns that the map ranks highest for that question, and the
    newest turns), and the kept messages, verbatim.  The agent's system prompt is not a
    state message and is untouched.  The context message counts at most ``budget`` tokens
    of ``token_counter``, its header included.  The engine holds every turn ever replaced,
    so a question about the start of a long conversation still finds it.

    The context message is a ``HumanMessage``, as LangChain's summary is: several providers
    refuse a system message that is not the first, and the agent sends its own system prompt
    first.  It carries ``additional_kwargs={"lc_source": "scwo_hsca"}`` (the middleware knows
    it again, drops it at the next replacement and never ingests it) and, in
    ``response_metadata["scwo"]``, which the model does not read: ``session``, ``turns``,
    ``tokens``, ``budget`` and the ``citations``.

    The cut never splits an AI message with tool calls from its tool messages: a cut that
    lands on a tool message moves back to the call.  The latest human message is kept
    verbatim even when it is older than the ``keep`` newest (it is the question the model
    answers).  Each message is ingested once: a message whose rendered text the session
    already holds (the same history passed again, with or without message ids) is not
    ingested again.  Below ``trigger``, a conversation that holds no context message, on a
    session whose memory already holds turns (a restart on ``store``, an earlier run), gets
    the context message first, so the memory surfaces in a new conversation too; and one
    whose context message was made for another question (a chat kept by a checkpointer: the
    next question arrives below ``trigger``, since the history was replaced) gets it made
    again, in its place, for the new question.  The model calls of one question (a tool loop)
    reuse it.

    Parameters
    ----------
    budget : int
        Most tokens of the context message that replaces the older messages.
    trigger : int or tuple, optional
        Replace once the history counts more than this many tokens (default ``4 * budget``; in
        tokens it must be above ``budget``); LangChain's ``("tokens", n)`` or ``("messages", n)``
        (more than ``n`` messages) too.
    keep : int or ("messages", int), default 6
        The newest messages kept verbatim (more when a tool call's pair would be split).
    token_counter : name, TokenCounter or callable ``str -> int``, optional
        Counts the history, and the context (default ``"estimate"``).
    store : SnapshotStore or path, optional
        Where each session's turns and snapshots are kept (SQLite), so memory survives a
        restart: a new middleware on the same store and ``session`` continues it.
    session : str, optional
        The memory's name.  Default: one per LangGraph thread (``config["configurable"]
        ["thread_id"]``); runs without a thread share the memory ``"default"``.
    embedder : str or callable, optional
        The engine's embedder for the context's ranking (``"minilm"``, or ``texts -> (n, d)``);
        default: the map's own lexical signals.
    recent : float, default 0.1
        Share of ``budget`` that goes first to the newest ingested turns (see
        :meth:`HSCAEngine.context <scwo_np.hsca.HSCAEngine.context>`).

    Examples
    --------
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> mw = ScwoHSCAMiddleware(budget=60, trigger=80, keep=2)
    >>> history = [HumanMessage("The deploy key for staging is kept in vault path ops/staging."),
    ...            AIMessage("Noted: the staging deploy key lives in vault at ops/staging."),
    ...            HumanMessage("The build cache lives in a bucket called ci-cache-eu."),
    ...            AIMessage("Noted: the build cache is the ci-cache-eu bucket."),
    ...            HumanMessage("Lunch is at noon on Fridays."), AIMessage("Noted."),
    ...            HumanMessage("Where is the staging deploy key kept?")]
    >>> update = mw.before_model({"messages": history}, None)
    >>> new = update["messages"][1:]  # after RemoveMessage(REMOVE_ALL_MESSAGES)
    >>> len(new), new[0].response_metadata["scwo"]["tokens"] <= 60, new[1:] == history[-2:]
    (3, True, True)
    >>> "ops/staging" in new[0].content
    True
    """

    def __init__(
        self,
        budget: int | None = None,
        *,
        trigger: int | tuple[str, int] | None = None,
        keep: int | tuple[str, int] = 6,
        token_counter: object = None,
        store: Any = None,
        session: str | None = None,
        embedder: object = None,
        recent: float = 0.1,  # HSCAEngine.context's default
    ) -> None:
        super().__init__()
        if budget is None:
            raise TypeError(
                "budget is required: the most tokens of the context that replaces older messages."
            )
        self.budget = check_budget(budget)
        if self.budget < 1:
            raise ValueError("budget must be at least 1 token; pass the context's size in tokens.")
        self.trigger = _size(4 * self.budget if trigger is None else trigger, "trigger")
        if self.trigger[0] == "tokens" and self.trigger[1] <= self.budget:
            raise ValueError(
                f"budget ({self.budget}) must be below trigger ({self.trigger[1]} tokens): the context that "
                "replaces the older messages would be as large as the history that set it off (the default "
                "trigger is 4 * budget)."
            )
        self.keep = _size(keep, "keep")[1]
        self.token_counter = as_token_counter(token_counter)
        self.recent = float(check_unit_interval(recent, name="recent", meaning="a share of the budget"))
        if session is not None and (not isinstance(session, str) or not session or "/" in session):
            raise ValueError(f"session must be a non-empty str without '/'; got {session!r}.")
        self.session = session
        if store is not None and not isinstance(store, SnapshotStore):
            if not isinstance(store, str | os.PathLike):
                raise TypeError(f"store must be a SnapshotStore or a path; got {type(store).__name__}.")
            store = SnapshotStore(store)
        self.store = store
        # bad options fail here, not mid-run; the embedder is resolved once, for every session
        self.embedder = HSCAEngine(token_counter=self.token_counter, embedder=embedder).embedder
        self._memories: dict[str, _Memory] = {}
        self._lock = threading.Lock()

    # -- the sessions ----------------------------------------------------------------------

    def _session(self) -> str:
        if self.session is not None:
            return self.session
        try:
            from langgraph.config import get_config

            thread = (get_config().get("configurable") or {}).get("thread_id")
        except (RuntimeError, ImportError):  # called outside a graph
            thread = None
        return "default" if thread is None else quote(str(thread), safe="") or "default"

    def memory(self, session: str | None = None) -> HSCAEngine:
        """The engine that holds ``session``'s replaced turns (loaded from ``store`` the first time).

        Parameters
        ----------
        session : str, optional
            The session (default: ``session=`` of the middleware, else ``"default"``).

        Returns
        -------
        HSCAEngine
            Its engine: ``engine.context(query, budget)`` is what the middleware surfaces.

        Examples
        --------
        >>> mw = ScwoHSCAMiddleware(budget=50)
        >>> mw.memory().context(None, 50).turns
        0
        """
        return self._memory(session or self.session or "default").engine

    def _memory(self, session: str) -> _Memory:
        with self._lock:
            mem = self._memories.get(session)
            if mem is None:
                opts = dict(token_counter=self.token_counter, embedder=self.embedder)
                if self.store is None:
                    mem = _Memory(HSCAEngine(**opts))
                else:
                    eng = HSCAEngine.from_store(self.store, session, **opts)
                    seen = {_fingerprint(c.text) for c in eng.get_micro_context() if c.text}
                    mem = _Memory(eng, seen, saved=len(eng.get_macro_context()))
                self._memories[session] = mem
            return mem

    # -- the replacement -------------------------------------------------------------------

    def _over(self, messages: Sequence[Any], texts: list[str]) -> bool:
        kind, n = self.trigger
        if kind == "messages":
            return len(messages) > n
        return int(count_tokens(texts, self.token_counter).sum()) > n if texts else False

    def _context_message(self, engine: HSCAEngine, query: str | None, session: str) -> HumanMessage | None:
        def tokens(text: str) -> int:
            return int(count_tokens([text], self.token_counter)[0])

        room = self.budget - tokens(HEADER + "\n\n")
        text, ctx = "", None
        while room >= 1:
            with warnings.catch_warnings():  # a room too small is tried and left here, not warned about
                warnings.simplefilter("ignore", UserWarning)
                ctx = engine.context(query, room, recent=self.recent)
            if not ctx.text:
                break
            text = f"{HEADER}\n\n{ctx.text}"
            over = tokens(text) - self.budget
            if over <= 0:
                break
            text, room = "", room - over  # the join counted more than its parts: shrink and redo
        if not text:  # no room for the header beside a piece: the context alone
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                ctx = engine.context(query, self.budget, recent=self.recent)
            text = ctx.text
        if not text:
            return None
        scwo = {"session": session, "query": query, "turns": ctx.turns, "tokens": tokens(text),
                "budget": self.budget, "citations": [p.citation for p in ctx.pieces]}  # fmt: skip
        return HumanMessage(
            content=text, additional_kwargs={"lc_source": SOURCE}, response_metadata={"scwo": scwo}
        )

    def replace(self, messages: Sequence[Any], session: str | None = None) -> dict[str, Any] | None:
        """The state update that replaces the older ``messages`` with the context (None when under ``trigger``).

        Parameters
        ----------
        messages : sequence of BaseMessage
            The agent's messages (``state["messages"]``).
        session : str, optional
            Whose memory (default as :meth:`before_model` chooses it).

        Returns
        -------
        dict or None
            ``{"messages": [RemoveMessage(REMOVE_ALL_MESSAGES), *system, context, *kept]}``, or
            None when the history is within ``trigger`` or nothing is older than the kept messages.

        Examples
        --------
        >>> from langchain_core.messages import HumanMessage
        >>> mw = ScwoHSCAMiddleware(budget=40, trigger=1000)
        >>> mw.replace([HumanMessage("short")]) is None
        True
        """
        messages = list(messages)
        if not messages:
            return None
        texts = [render(m) for m in messages]
        head = 0
        while head < len(messages) and isinstance(messages[head], SystemMessage):
            head += 1
        body = messages[head:]
        humans = [i for i, m in enumerate(body) if isinstance(m, HumanMessage) and not _ours(m)]
        last_human = humans[-1] if humans else None
        query = (_text(body[last_human]).strip() if last_human is not None else "") or None
        session = session or self._session()
        if not self._over(messages, texts):
            return self._recall(messages[:head], body, query, session)
        cut = safe_cut(body, len(body) - self.keep)
        if not [i for i in range(cut) if i != last_human]:
            return None  # nothing older than what is kept
        mem = self._memory(session)
        with mem.lock:
            added = 0
            for i, m in enumerate(body[:cut]):
                text = texts[head + i]
                if i == last_human or _ours(m) or not text.strip():
                    continue
                fp = _fingerprint(text)
                if fp not in mem.seen:
                    mem.engine.ingest_turn(text)
                    mem.seen.add(fp)
                    added += 1
            if self.store is not None and added:
                snaps = mem.engine.get_macro_context()
                self.store.save(session, snaps[mem.saved :], buffer=mem.engine.buffer)
                mem.saved = len(snaps)
            context = self._context_message(mem.engine, query, session)
        kept = [m for m in body[cut:] if not _ours(m)]
        if last_human is not None and last_human < cut:
            kept.insert(0, body[last_human])
        return {
            "messages": [
                RemoveMessage(id=REMOVE_ALL_MESSAGES),
                *messages[:head],
                *([context] if context else []),
                *kept,
            ]
        }

    def _recall(self, head: list, body: list, query: str | None, session: str) -> dict[str, Any] | None:
        """Below ``trigger``: a conversation without a context message, on a session whose memory
        holds turns (a restart on the store, or an earlier run), gets its context first; one whose
        context message was made for another question gets it made again, for this one."""
        ours = [i for i, m in enumerate(body) if _ours(m)]
        if ours:
            made_for = (getattr(body[ours[-1]], "response_metadata", None) or {}).get("scwo") or {}
            if made_for.get("query", _UNKNOWN) == query:
                return None  # the same question (a tool loop's next model call): the context holds
        with self._lock:
            mem = self._memories.get(session)
        if mem is None and self.store is not None:
            mem = self._memory(session)  # loaded once per session and process
        if mem is None:
            return None
        with mem.lock:
            eng = mem.engine
            if not eng.buffer and not eng.get_macro_context():
                return None
            context = self._context_message(eng, query, session)
        if ours:  # in the old one's place (gone when the memory has nothing for the question)
            body = [
                context if i == ours[-1] else m for i, m in enumerate(body) if not _ours(m) or i == ours[-1]
            ]
            return {
                "messages": [
                    RemoveMessage(id=REMOVE_ALL_MESSAGES),
                    *head,
                    *(m for m in body if m is not None),
                ]
            }
        if context is None:
            return None
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *head, context, *body]}

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Replace the older messages with HSCA's context once the history passes ``trigger``.

        Parameters
        ----------
        state : AgentState
            The agent's state (its ``"messages"``).
        runtime : Runtime
            LangGraph's runtime (unused; the session comes from ``session=`` or the thread).

        Returns
        -------
        dict or None
            The state update (see :meth:`replace`), or None.

        Examples
        --------
        >>> from langchain_core.messages import HumanMessage
        >>> mw = ScwoHSCAMiddleware(budget=40, trigger=1000)
        >>> mw.before_model({"messages": [HumanMessage("short")]}, None) is None
        True
        """
        return self.replace(state["messages"])

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """:meth:`before_model`, for agents run asynchronously (the work runs in a thread).

        Parameters
        ----------
        state : AgentState
            The agent's state.
        runtime : Runtime
            LangGraph's runtime (unused).

        Returns
        -------
        dict or None
            As :meth:`before_model`.

        Examples
        --------
        >>> import asyncio
        >>> from langchain_core.messages import HumanMessage
        >>> mw = ScwoHSCAMiddleware(budget=40, trigger=1000)
        >>> asyncio.run(mw.abefore_model({"messages": [HumanMessage("short")]}, None)) is None
        True
        """
        return await asyncio.to_thread(self.replace, state["messages"], self._session())
