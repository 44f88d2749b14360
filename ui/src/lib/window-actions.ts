// The window's actions as the command palette and a session's ⋯ menu offer them: built
// from the window's state when asked, so what cannot run now is not offered.
import type { Action } from "./actions";
import type { AppStore } from "./app.svelte";
import type { LibraryStore } from "./library.svelte";
import { PLACES, SETTINGS_LABELS, SETTINGS_TABS, type PlaceName } from "./places";
import { SHORTCUTS } from "./shortcuts";

export interface ActionContext {
  app: AppStore;
  library: LibraryStore | null;
  pickPlace: (view: PlaceName) => void;
  focusComposer?: () => void;
  focusSearch?: () => void;
  openFind?: () => void;
  openHelp?: () => void;
  /** Only what acts on the selected session (its header's ⋯ menu). */
  sessionMenu?: boolean;
}

const keys = (name: string) => SHORTCUTS[name]?.keys;

/** What can be done to the selected session now. */
function sessionActions({ app, library }: ActionContext): Action[] {
  const view = app.selected;
  if (!view) return [];
  const out: Action[] = [];
  const group = "Session";
  if (view.running && !view.terminalOpen) out.push({ id: "stop", label: "Stop the running turn", group, keys: keys("stop"), run: () => app.stopSelected() });
  if (app.canUndo) out.push({ id: "restore", label: "Restore the files the last turn changed", group, keywords: ["undo", "revert"], run: () => void app.undo() });
  if (library) {
    out.push({
      id: "fork",
      label: "Fork this session",
      group,
      keywords: ["branch", "copy"],
      run: async () => {
        const forked = await library.fork(view.key, null);
        if (forked) {
          await app.refreshSessions();
          app.selectSession(forked.sessionKey);
        }
      },
    });
  }
  if (app.terminals && view.terminalOffer === "open") out.push({ id: "terminal", label: "Open the agent's terminal", group, keywords: ["tui", "pty"], run: () => view.showTerminal() });
  // The desktop shell's pop-out (a window of its own for this session), where there is one.
  const openWindow = app.transport.openWindow;
  if (openWindow) out.push({ id: "pop-out", label: "Open in a new window", group, keywords: ["pop out", "detach"], run: () => void openWindow(`#/s/${encodeURIComponent(view.key)}`) });
  if (app.beside) out.push({ id: "close-beside", label: "Close the second pane", group, keywords: ["split"], run: () => app.showBeside(null) });
  const info = app.sessions.find((s) => s.sessionKey === view.key);
  if (info) {
    out.push(
      info.pinned
        ? { id: "unpin", label: "Unpin this session", group, run: () => void app.mark(view.key, "unpin") }
        : { id: "pin", label: "Pin this session", group, keywords: ["keep on top", "favourite"], run: () => void app.mark(view.key, "pin") },
      info.archived
        ? { id: "unarchive", label: "Unarchive this session", group, keywords: ["restore"], run: () => void app.mark(view.key, "unarchive") }
        : { id: "archive", label: "Archive this session", group, keywords: ["hide", "done"], run: () => void app.mark(view.key, "archive") },
    );
  }
  return out;
}

/** Sessions to go to, or to show beside the selected one (the most recent first). */
function sessionTargets(app: AppStore, limit = 200): Action[] {
  const out: Action[] = [];
  for (const s of app.sessions.slice(0, limit)) {
    const label = s.title || s.sessionKey;
    const where = s.workdir.split("/").filter(Boolean).at(-1) ?? s.workdir;
    if (s.sessionKey !== app.selectedKey) {
      out.push({ id: `go:${s.sessionKey}`, label, group: "Sessions", keywords: [s.agent, where], run: () => app.selectSession(s.sessionKey) });
      if (app.selectedKey) {
        out.push({ id: `beside:${s.sessionKey}`, label: `Beside: ${label}`, group: "Sessions", keywords: ["split", "compare", s.agent], run: () => app.showBeside(s.sessionKey) });
      }
    }
  }
  return out;
}

/** The choices for the next turn: agent, model, effort and account. */
function choiceActions(app: AppStore): Action[] {
  const out: Action[] = [];
  const name = (id: string) => app.agents.find((a) => a.id === id)?.name ?? id;
  if (!app.selected) {
    for (const a of app.agents.filter((a) => a.installed && a.id !== app.agent)) {
      out.push({ id: `agent:${a.id}`, label: `Use ${a.name}`, group: "Agent", keywords: ["switch agent", a.id], run: () => void app.chooseAgent(a.id) });
    }
  } else {
    const view = app.selected;
    const next = view.current.recordedAgent ?? view.current.agent;
    if (!view.running) {
      for (const a of app.agents.filter((a) => a.installed && a.id !== next)) {
        out.push({ id: `switch:${a.id}`, label: `Switch this session to ${a.name}`, group: "Agent", keywords: ["switch agent", a.id], run: () => void app.switchAgent(view.key, a.id) });
      }
    }
  }
  for (const m of app.models.filter((m) => m.id !== app.model)) {
    out.push({ id: `model:${m.id}`, label: `Model: ${m.label || m.id}`, group: "Model", keywords: [m.id, name(app.agent)], run: () => void (app.model = m.id) });
  }
  for (const e of app.efforts.filter((e) => e !== app.effort)) {
    out.push({ id: `effort:${e}`, label: `Effort: ${e}`, group: "Effort", keywords: ["reasoning", "thinking"], run: () => void (app.effort = e) });
  }
  for (const acc of app.accounts.forAgent(app.agent).filter((a) => a.id !== app.account)) {
    out.push({ id: `account:${acc.id}`, label: `Account: ${acc.label}`, group: "Account", keywords: ["switch account", acc.id], run: () => void (app.account = acc.id) });
  }
  return out;
}

export function buildActions(ctx: ActionContext): Action[] {
  const { app } = ctx;
  if (ctx.sessionMenu) return sessionActions(ctx);
  const out: Action[] = [];
  out.push({ id: "new-session", label: "New session", group: "Session", keys: keys("newSession"), keywords: ["start", "create"], run: () => (app.newSession(), ctx.focusComposer?.()) });
  if (app.inbox.length > 0) {
    out.push({ id: "answer-oldest", label: "Answer the oldest question", group: "Session", keys: keys("answerOldest"), keywords: ["inbox", "permission"], run: () => app.answerOldest() });
  }
  out.push(...sessionActions(ctx));
  if (ctx.openFind && app.selected) out.push({ id: "find", label: "Find in this session", group: "Session", keys: keys("find"), run: ctx.openFind });
  if (ctx.focusComposer) out.push({ id: "composer", label: "Focus the composer", group: "Session", keys: keys("focusComposer"), run: () => (app.go({ view: "session" }), ctx.focusComposer?.()) });
  for (const p of PLACES) {
    out.push({ id: `go-${p.view}`, label: `Go to ${p.label}`, group: "Go to", keys: p.keys, keywords: ["view", "open"], run: () => ctx.pickPlace(p.view) });
  }
  if (ctx.focusSearch) out.push({ id: "search", label: "Search sessions and transcripts", group: "Go to", keys: keys("search"), run: ctx.focusSearch });
  out.push({ id: "open-workspace", label: "Open a workspace folder", group: "Go to", keys: keys("openWorkspace"), keywords: ["folder", "project"], run: () => void app.pickWorkspace() });
  out.push(...choiceActions(app));
  for (const t of SETTINGS_TABS) {
    out.push({ id: `settings-${t}`, label: `Settings: ${SETTINGS_LABELS[t]}`, group: "Settings", keywords: ["preferences"], run: () => app.go({ view: "settings", tab: t }) });
  }
  for (const theme of ["light", "dark", "system"] as const) {
    if (theme !== app.theme) out.push({ id: `theme-${theme}`, label: `Theme: ${theme}`, group: "Window", keywords: ["appearance", "colour", "color"], run: () => app.setTheme(theme) });
  }
  if (ctx.openHelp) out.push({ id: "help", label: "Keyboard shortcuts", group: "Window", keys: keys("help"), keywords: ["help", "keys"], run: ctx.openHelp });
  const openLog = app.transport.openLog;
  if (openLog) out.push({ id: "open-log", label: "Open the log file", group: "Window", run: () => void openLog() });
  out.push(...sessionTargets(app));
  return out;
}
