import { readdirSync } from "node:fs";
import { join } from "node:path";

/** Every file below `dir` whose name ends in one of `extensions`, sorted (the code-checking tests). */
export function filesBelow(dir: string, extensions: readonly string[] = [".ts"]): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesBelow(path, extensions));
    else if (extensions.some((ext) => entry.name.endsWith(ext))) out.push(path);
  }
  return out.sort();
}
