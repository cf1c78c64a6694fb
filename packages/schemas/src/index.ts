export * from "./jobs";
export * from "./health";
