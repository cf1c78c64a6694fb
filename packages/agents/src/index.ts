// @loopsmith/agents: the four model roles. Each builds one typed request with its own instructions from
// the evidence it is given; none of them decides the next state.
export * from "./contract";
export * from "./checks";
export * from "./run-summary";
export * from "./planner";
export * from "./generator";
export * from "./inspector";
export * from "./refiner";
export * from "./progress";
