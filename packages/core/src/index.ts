export * from "./errors";
export * from "./public-error";
export * from "./logger";
export * from "./config";
export * from "./storable";
export * from "./version";
export * from "./key-file";
