export { Hitl, newClaimToken } from "./client.js";
export type { Approval, AskOptions, HitlOptions, Report } from "./client.js";
export { ToolBoundary } from "./boundary.js";
export {
  ApiError,
  Cancelled,
  HitlError,
  Rejected,
  RunStopped,
  Steered,
  TimedOut,
  Unanswered,
} from "./errors.js";
export type { RejectedFields } from "./errors.js";
export type {
  ApprovalRequest,
  Args,
  Call,
  JsonValue,
  Question,
  QuestionState,
  RequestState,
  Resolution,
  Run,
  Steering,
  WaitOptions,
} from "./types.js";
