"""The bodies of the `/v1` HTTP API, with their limits.

The API (`bot.api`) parses requests with these models, and the SDK (`bot.sdk`)
builds every call with them in both modes, so talking to Redis directly refuses
exactly what the HTTP API refuses. They live in the core because both import
them and neither may import the other. Plain pydantic: no web framework here.

Unknown fields are refused (422): a misspelt `idempotency_key` would
otherwise silently drop the protection it asked for.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
    model_validator,
)

from bot import messages as msg
from bot.core.args.payload import MAX_ARGS_DEPTH
from bot.core.args.plainjson import inexact_number, lone_surrogate, too_deep
from bot.core.args.schema import schema_problem
from bot.core.candidates import MAX_CANDIDATES, MIN_CANDIDATES, candidates_problem
from bot.core.choices import MAX_OPTION_CHARS, MAX_OPTIONS, option_problem
from bot.core.models import DETAIL_MAX, RiskTier, Run
from bot.core.proof.fence import FENCE, TOKEN
from bot.errors import PayloadError

MAX_TEXT = DETAIL_MAX  # a reason or a report: what one Slack section shows

# Run ids come from our workers ("run-...") or from outside agents (uuids, "thread:42").
RUN_ID = r"^[A-Za-z0-9_.:-]+$"
RunId = Annotated[str, Field(min_length=1, max_length=128, pattern=RUN_ID)]
# Tool names are identifiers in every agent framework (OpenAI: ^[a-zA-Z0-9_-]{1,64}$; MCP adds . /).
ToolName = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:/-]+$")]
# A person, service or channel name: any printable text, short.
Name = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[^\x00-\x1f\x7f]+$")]
Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _utf8_text(cls, data: Any) -> Any:
        # Valid JSON, but Redis and Slack would fail to encode it later, after a write.
        if lone_surrogate(data):
            raise ValueError(msg.TEXT_LONE_SURROGATE)
        return data


class ApprovalIn(_In):
    tool: ToolName
    args: dict[str, Any] = Field(
        default_factory=dict,
        description=f"The tool's arguments: plain JSON, at most 64 KiB, nested at most "
        f"{MAX_ARGS_DEPTH} levels deep (the args object itself is one); integers within "
        "±2^53 (9007199254740992), what a JSON number carries exactly: send larger ones as "
        "strings.",
    )
    run_id: RunId | None = None
    run_title: Name | None = Field(
        default=None,
        description="What the run is, for people: its name in Slack and in `hitl-bot runs` "
        "(a Claude Code session names its project folder). Kept from the call that first "
        "uses `run_id`; shown as plain text.",
    )
    requester: Name | None = Field(
        default=None,
        description="Over HTTP the requester is the API token's identity; a different value "
        "is refused (403). The SDK's direct mode names it here.",
    )
    on_behalf_of: Name | None = Field(
        default=None,
        description="The person the agent acts for (a Slack user id shows as a mention). "
        "They count as requester: they may reject, never approve.",
    )
    channel: Name | None = Field(
        default=None,
        description="Only one of the policy's review channels for the request's tier (403 "
        "otherwise); the policy alone decides where a request is reviewed.",
    )
    idempotency_key: Annotated[str, Field(min_length=1, max_length=200)] | None = Field(
        default=None,
        description="Same key and same call: 200 and the same request; another call: 409.",
    )
    risk: RiskTier | None = Field(
        default=None, description="Raises the tier the policy gives; never lowers it."
    )
    args_schema: dict[str, Any] | None = Field(
        default=None,
        description=(
            "JSON Schema of the tool's arguments (an object schema, at most 16 KiB, 64 levels "
            "deep and 500 keywords). The args must fit it; it is recorded for this caller's "
            "tool (other callers' schemas for the same tool name are theirs), and a person's "
            "edit that does not fit it is refused before it is approved. Patterns are run by "
            "RE2 (no backreferences or lookaround), and a check may take 50,000 steps."
        ),
    )

    @field_validator("args")
    @classmethod
    def _plain_args(cls, v: dict[str, Any]) -> dict[str, Any]:
        # Not `args_problem`: `_utf8_text` ran first on the whole body, args included, and
        # refused any lone surrogate; that would walk the args again for it.
        if too_deep(v, MAX_ARGS_DEPTH):
            raise ValueError(msg.ARGS_TOO_DEEP.format(limit=MAX_ARGS_DEPTH))
        if (where := inexact_number(v)) is not None:
            raise ValueError(msg.ARGS_INEXACT_NUMBER.format(path=where))
        return v

    candidates: list[dict[str, Any]] | None = Field(
        default=None,
        description=(
            f"Instead of `args`: {MIN_CANDIDATES} to {MAX_CANDIDATES} candidate argument "
            "objects for the tool. The card shows each in full with a Choose button; the one "
            "a person chooses becomes the request's `args` (and payload hash), and only it "
            "can run. Reviewed at the highest tier any candidate reaches; each must fit "
            "`args_schema` if one is given."
        ),
    )

    @model_validator(mode="after")
    def _args_or_candidates(self) -> ApprovalIn:
        if self.candidates is not None:
            problem = candidates_problem(self.tool, self.candidates)
            if self.args:
                problem = msg.ARGS_OR_CANDIDATES
            if problem is not None:
                raise ValueError(problem)
        return self

    @field_validator("args_schema")
    @classmethod
    def _a_json_schema(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        if v is not None and (problem := schema_problem(v)) is not None:
            raise ValueError(problem)
        return v


class ResultIn(_In):
    ok: bool
    detail: Annotated[str, Field(max_length=MAX_TEXT)] | None = None
    compensated: bool | None = Field(
        default=None,
        description=(
            "On a failure: true if a compensating action exists and is running (the request "
            "goes to rollback_pending; report its outcome with a second result), otherwise "
            "the request goes to manual_intervention."
        ),
    )
    fence: str | None = Field(
        default=None,
        pattern=FENCE,
        description=(
            "The `fence` the claim answered with. Pass it: a report whose claim was "
            "superseded (lost in a failover, the request claimed again) is then refused "
            "with 409 `stale_fence` and audited, so it cannot overwrite the later claim's. "
            "Without it the report is accepted from whoever holds the request."
        ),
    )


class ClaimIn(_In):
    claim_token: str | None = Field(
        default=None,
        pattern=TOKEN,
        description=(
            "The executor's own random token for this claim (8-64 url-safe characters, one "
            "per request it means to run). The same token again, say after a 503, gets the "
            "same claim back instead of a 409; left out, the server picks one."
        ),
    )


class CancelIn(_In):
    reason: Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[a-z_]+$")] = "withdrawn"


class QuestionIn(_In):
    question: Text
    run_id: RunId | None = None
    channel: Name | None = None
    options: list[str] = Field(
        default_factory=list,
        description=(
            f"The answers a person picks from, one button each (at most {MAX_OPTIONS}, "
            f"each at most {MAX_OPTION_CHARS} characters); empty: a free-text answer."
        ),
    )
    timeout_seconds: float = Field(
        default=3600,
        gt=0,
        le=7 * 86_400,
        allow_inf_nan=False,
        description="How long a person may answer; the question expires after it.",
    )

    @field_validator("options")
    @classmethod
    def _options(cls, options: list[str]) -> list[str]:
        problem = option_problem(options)
        if problem:
            raise ValueError(problem)
        return options


class RunIn(_In):
    agent: Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")]
    prompt: Annotated[str, Field(min_length=1, max_length=8000)]
    channel: Name | None = None
    requester: Name | None = Field(
        default=None, description="Must be the API token's identity if given (403 otherwise)."
    )
    on_behalf_of: Name | None = Field(
        default=None,
        description="The person who asked for the run: they may not approve its actions.",
    )


class SteerIn(_In):
    text: Annotated[str, Field(min_length=1, max_length=4000)]
    requester: Name | None = Field(
        default=None, description="Must be the API token's identity if given (403 otherwise)."
    )


class FinishIn(_In):
    # Strict, as the schema says: 0 or "false" must be refused, not read as a verdict.
    ok: StrictBool = Field(
        default=True, description="true: the run finished (`finished`); false: it `failed`."
    )
    detail: Annotated[str, Field(max_length=MAX_TEXT)] | None = Field(
        default=None, description="The run's result (or, on a failure, its error), shown."
    )


class RunOut(Run):
    """A run, with its id also as `run_id` (the name the API contract uses)."""

    run_id: str

    @classmethod
    def of(cls, run: Run) -> RunOut:
        return cls.model_validate({**run.model_dump(), "run_id": run.id})


class Health(BaseModel):
    ok: bool
    down: list[str] | None = Field(
        default=None,
        description='The parts that are down: "redis", "slack_socket_mode", "task:NAME".',
    )
    detail: str | None = Field(
        default=None, description="What is wrong, in words; the errors themselves are logged."
    )


M = TypeVar("M", bound=BaseModel)


def checked(model: type[M], **fields: Any) -> M:
    """Build a wire body; a field out of bounds raises PayloadError in both modes."""
    try:
        return model(**fields)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in e['loc']) or model.__name__}: {e['msg']}"
            for e in exc.errors()
        )
        raise PayloadError(problems) from None


class RunIdBody(BaseModel):
    run_id: RunId
