export * from "./types";
export * from "./errors";
export * from "./config";
export * from "./scripted";
export * from "./provider-schema";
export * from "./ai-sdk";
export * from "./pricing";
