export * from "./sandbox";
export * from "./image";
export * from "./output";
export { BOOTSTRAP_PY } from "./bootstrap";
export * from "./connect";
export * from "./storable";
export * from "./route";
export * from "./oci-runtime";
