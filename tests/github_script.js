// Run a workflow's actions/github-script step under Node with a recorded, fake GitHub.
//
// usage: node github_script.js SCRIPT.js WORLD.json   (in the folder the step would run in)
// WORLD: {"payload": {...}, "repo": {"owner", "repo"}, "pulls": [...], "comments": {"<number>": [...]}}
// Prints JSON: {"calls": [[method, params], ...], "failed": message|null, "notices": [...]}.
// Like github-script, the script is the body of an async function of (github, context, core, require).
const fs = require("fs");

const [scriptPath, worldPath] = process.argv.slice(2);
const script = fs.readFileSync(scriptPath, "utf8");
const world = JSON.parse(fs.readFileSync(worldPath, "utf8"));
const calls = [];
const result = { calls, failed: null, notices: [] };

function list(method, items) {
  return async (params) => {
    calls.push([method, params]);
    return { data: items(params) };
  };
}

const github = {
  // Every page at once: the fake holds few items.
  paginate: async (method, params) => (await method(params)).data,
  rest: {
    pulls: {
      list: list("pulls.list", (params) =>
        world.pulls.filter((pr) => pr.state === (params.state || "open") &&
          (!params.head || `${pr.head.repo.owner.login}:${pr.head.ref}` === params.head))),
    },
    issues: {
      listComments: list("issues.listComments", (params) => world.comments[String(params.issue_number)] || []),
      createComment: list("issues.createComment", () => ({})),
      updateComment: list("issues.updateComment", () => ({})),
    },
  },
};
const context = { payload: world.payload, repo: world.repo };
const core = {
  setFailed: (message) => { result.failed = String(message); },
  notice: (message) => { result.notices.push(String(message)); },
  info: () => {},
};

const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
new AsyncFunction("github", "context", "core", "require", script)(github, context, core, require)
  .then(() => process.stdout.write(JSON.stringify(result)))
  .catch((error) => { process.stderr.write(String(error.stack || error)); process.exit(1); });
