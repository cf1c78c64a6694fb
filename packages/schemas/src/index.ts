export * from "./jobs";
export * from "./health";
export * from "./loop";
export * from "./goals";
export * from "./budgets";
export * from "./webhooks";
export * from "./replay";
export * from "./artifacts";
