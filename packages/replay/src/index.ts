// @loopsmith/replay: a finished goal exported as a script, two runs of a goal compared, and the judge
// agreement report. Pure: rows in, documents out; the API and the benches do the reading.
export { EXPORTABLE_STATES, exportGoal, fileForBody, HIDDEN_MARKER, restoreHidden, scriptFromCalls, separateHidden, type GoalRecord, type HiddenMessage, type RecordedCall, type RecordedFile } from "./script";
export { checkResults, compareRuns, describeComparison, signature, type CheckChange, type Comparison, type RunSide, type TransitionChange } from "./compare";
export { inspectionVerdicts, judgeGoal, judgeReport, MAX_REPORTED_GOALS, type InspectionVerdict, type JudgeCall, type JudgeGoal, type JudgeGoalInput } from "./judges";
