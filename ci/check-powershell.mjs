// Syntax check of PowerShell files with tree-sitter's PowerShell grammar (not PowerShell's own parser, which cannot
// be installed here): every ERROR or MISSING node is reported with its line and column, and the exit code is 1.
// usage: node ci/check-powershell.mjs FILE...      (modules from .cache/tree-sitter, installed by ci/setup.sh)
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const modules = join(dirname(fileURLToPath(import.meta.url)), "..", ".cache", "tree-sitter", "node_modules");
const require = createRequire(join(modules, "x.js"));
const Parser = require("tree-sitter");
// The grammar's binding is ESM-only.
const PowerShell = (await import(join(modules, "tree-sitter-powershell", "bindings", "node", "index.js"))).default;

if (process.argv.length < 3) {
  console.error("usage: node ci/check-powershell.mjs FILE...");
  process.exit(2);
}
const parser = new Parser();
parser.setLanguage(PowerShell);
let bad = 0;
for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, "utf8");
  // The node binding reads long inputs in chunks; a callback hands it the text piece by piece.
  const tree = parser.parse((index) => text.slice(index, index + 4096));
  const problems = [];
  const walk = (node) => {
    if (node.type === "ERROR" || node.isMissing) {
      const p = node.startPosition;
      const what = node.isMissing ? `missing ${node.type}` : `cannot parse '${text.slice(node.startIndex, node.endIndex).split("\n")[0].slice(0, 60)}'`;
      problems.push(`${file}:${p.row + 1}:${p.column + 1}: ${what}`);
      if (!node.isMissing) return;
    }
    for (const child of node.children) walk(child);
  };
  walk(tree.rootNode);
  if (problems.length) {
    bad++;
    for (const p of problems) console.error(p);
  } else {
    console.log(`${file}: parses (${tree.rootNode.descendantCount} nodes)`);
  }
}
process.exit(bad ? 1 : 0);
