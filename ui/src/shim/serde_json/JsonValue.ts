// Stand-in for ts-rs's `serde_json/JsonValue.ts`, which the protocol's type export
// writes into a subfolder that the committed ui/src/generated/ lacks. tsconfig's
// `rootDirs` overlays this folder on src/generated so `./serde_json/JsonValue`
// resolves; delete it once the generator commits the subfolder.
export type JsonValue =
  | number
  | string
  | boolean
  | Array<JsonValue>
  | { [key in string]?: JsonValue }
  | null;
