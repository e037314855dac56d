/**
 * Imports a TypeScript module with Node's own type stripping when this Node has it on (22.18+,
 * 23.6+) and the file is not under node_modules (Node refuses to strip there: the case of an
 * installed package), else through tsx, registered once. The CLI entry and the signature worker
 * entry load the sources this way, so both run them the same way.
 */
export async function loadTypeScript(url) {
  const inNodeModules = url.pathname.split("/").includes("node_modules");
  if (process.features.typescript && !inNodeModules) return import(url.href);
  const { register } = await import("tsx/esm/api");
  register();
  return import(url.href);
}
