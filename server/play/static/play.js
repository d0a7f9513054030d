// AgentHop Play: a person works an item with the seven tools. Every action is one POST to the play API,
// which passes it to the session's metering (Session.call) exactly as an MCP tools/call would be.
// All text from the server is inserted with textContent (AgentHopDOM.el): paper text is untrusted data.
"use strict";

const { byId: $, el, isTyping, helpPanel, plural, shortId } = window.AgentHopDOM;
const API = "/play/api";
const SAVED = "agenthop-play";  // localStorage: the running attempt's session ID, so a reload or a new tab finds it
const TERMINATIONS = {
  answer: "You submitted an answer.",
  budget: "The attempt ended: two calls in a row were refused because the budget could not pay for them.",
  max_turns: "The attempt ended: every action was used without submitting an answer.",
  abandoned: "You gave up on this item.",
  token_limit: "The attempt ended at the token cap.",
  error: "The attempt ended with an error.",
};
const STATUS = { not_played: "not played", in_progress: "in progress", cut_short: "cut short (server restarted)", finished: "finished" };
const TOOL_LABELS = { get_paper_info: "Info", get_references: "References", list_sections: "Sections" };

const state = { config: null, participant: null, session: null, entries: [], busy: false, pending: null };
let help = null;
// Tabs of this browser on the same attempt keep in step: each action is announced to the others, which re-read it.
const tabs = "BroadcastChannel" in window ? new BroadcastChannel("agenthop-play") : null;

function tellOtherTabs() {
  if (tabs && state.session) tabs.postMessage({ session: state.session.session_id });
}

// The banner about another tab is true only while that tab has the attempt open: a tab says when it leaves.
function otherTabLeft() { $("elsewhere").hidden = true; }

async function refreshFromServer(why) {
  if (!state.session) return;
  try {
    const full = await api("GET", `/sessions/${encodeURIComponent(state.session.session_id)}`);
    state.entries = (full.history || []).map((h) => ({ ...h, args: h.arguments, label: labelOf(h.tool, h.arguments) }));
    $("results").replaceChildren(...state.entries.map(renderEntry));
    $("no-results").hidden = state.entries.length > 0;
    update(full);
    // On the end screen the banner would only distract: the attempt no longer changes anywhere.
    if (why && !state.session.ended) { $("elsewhere").textContent = why; $("elsewhere").hidden = false; announce(why); }
  } catch (err) { showProblem(`Cannot update the attempt: ${err.message}`); }
}

class Unreachable extends Error {}

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(API + path, init);
  } catch (_) {  // the browser says only "Failed to fetch": say what it means
    throw new Unreachable(`cannot reach the AgentHop server at ${location.host}. Is it still running? `
      + "If the network dropped, try again: the attempt is still there. If the server stopped, the attempt ended with it "
      + "(a restart ends every attempt in progress, and it will not count as played); reload once it is back to start again.");
  }
  let data = null;
  try { data = await response.json(); } catch (_) { data = null; }
  if (!response.ok) {
    const error = new Error((data && data.error) || `the server answered ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

function announce(text) { $("announce").textContent = text; }

function showProblem(text) {
  const p = $("problem");
  p.textContent = text || "";
  p.hidden = !text;
}

function costOf(tool) {
  const found = (state.config?.tools || []).find((t) => t.name === tool);
  return found ? found.cost : 0;
}

// --- choosing an item ------------------------------------------------------------------------------------

function describeRules(config) {
  const caps = config.caps;
  $("costs").replaceChildren(...config.tools.map((t) => el("li", {}, el("code", { text: t.name }), ` ${t.cost === 0 ? "free" : plural(t.cost, "point")}`)));
  const limits = [caps.budget === null ? "no budget limit" : `a budget of ${plural(caps.budget, "point")}`,
    caps.max_turns === null ? "no limit on actions" : `${plural(caps.max_turns, "action")} (each click that calls a tool is one)`];
  $("limits").textContent = `You have ${limits.join(" and ")}; the attempt ends at either limit.`;
}

// One listing at a time: the first listing under a new name claims it and sets the browser's key cookie in its
// answer, so a second listing sent before that answer carries no cookie and would be refused as another browser's.
let listing = Promise.resolve();
// Set once the person asks for the list (Enter on the name). The start-up listing is then not needed, and one sent
// after it would hide the key form the person may be typing into, as the name was another browser's.
let askedForList = false;

function loadItems() {
  const participant = $("participant").value.trim();
  if (!$("participant").checkValidity()) { $("participant").reportValidity(); return listing; }
  listing = listing.then(() => listItems(participant));
  return listing;
}

async function listItems(participant) {
  showProblem("");
  $("key-form").hidden = true;
  try {
    const list = await api("GET", `/items?participant=${encodeURIComponent(participant)}`);
    state.participant = list.participant;
    localStorage.setItem("agenthop-participant", list.participant);
    renderItems(list);
  } catch (err) {
    $("choice").hidden = true;
    showProblem(`Cannot list the items: ${err.message}`);
    if (err.status === 403) askKey(participant);  // the name is another browser's: its key continues it here
  }
}

function askKey(participant) {
  $("key-name").textContent = participant;
  $("key-input").value = "";
  $("key-form").hidden = false;
  $("key-input").focus();
}

async function enterKey() {
  const participant = $("participant").value.trim();
  try {
    await api("POST", "/key", { participant, key: $("key-input").value.trim() });
  } catch (err) { showProblem(`The key was not taken: ${err.message}`); $("key-input").focus(); return; }
  await loadItems();
}

function itemAction(item) {
  if (item.status === "in_progress") return el("button", { type: "button", class: "primary", "aria-label": `Resume ${item.item_id}`, onclick: () => start(item.item_id) }, "Resume");
  if (!item.replayable) return el("span", { class: "note", text: "answer shown" });
  return el("button", { type: "button", "aria-label": `Play ${item.item_id}`, onclick: () => start(item.item_id) },
    item.status === "finished" ? "Play again" : "Play");
}

function renderItems(list) {
  const finished = list.items.filter((i) => i.status === "finished").length;
  $("items").replaceChildren(...list.items.map((item) => el("tr", { class: item.status },
    el("th", { scope: "row" }, el("code", { text: item.item_id })),
    el("td", { text: item.seed_title }),
    el("td", { class: "question", text: item.question }),
    el("td", { class: "status", text: STATUS[item.status] || item.status }),
    el("td", {}, itemAction(item)))));
  $("items-caption").textContent = `Items for ${list.participant}: ${finished} of ${list.items.length} finished`;
  const open = list.items.filter((i) => i.status === "in_progress");
  const short = list.items.filter((i) => i.status === "cut_short");
  const notes = [];
  if (open.length) notes.push(`You have ${plural(open.length, "attempt")} in progress (${open.map((i) => i.item_id).join(", ")}): resume from the list.`);
  if (short.length) {
    const one = short.length === 1;
    notes.push(`${plural(short.length, "attempt")} (${short.map((i) => i.item_id).join(", ")}) ${one ? "was" : "were"} cut short when the server `
      + `restarted; ${one ? "it does" : "they do"} not count as played.`);
  }
  $("unfinished").textContent = notes.join(" ");
  $("unfinished").hidden = !notes.length;
  $("play-next").disabled = list.next === null;
  $("next-note").textContent = list.next === null ? "Nothing left to start: every item is finished or in progress." : `Next: ${list.next}`;
  $("choice").hidden = false;
  $("my-key").hidden = !list.key;
  $("my-key-name").textContent = list.participant;
  $("my-key-value").textContent = list.key || "";
}

function showStart() {
  $("game").hidden = true;
  $("meters").hidden = true;
  $("start").hidden = false;
  $("where").textContent = "";
  document.title = "AgentHop Play";
  if (state.participant) loadItems();
}

// --- an attempt ------------------------------------------------------------------------------------------

async function start(itemId) {
  showProblem("");
  try {
    const session = await api("POST", "/sessions", { participant: state.participant, item: itemId });
    // A resumed attempt comes back as its state: fetch its history so the results are shown again.
    const full = await api("GET", `/sessions/${encodeURIComponent(session.session_id)}`);
    enterSession(full);
    $("item").focus();
    announce(`Item ${full.item_id} ${full.history.length ? "resumed" : "started"}.`);
  } catch (err) { showProblem(`Cannot start: ${err.message}`); }
}

function enterSession(session) {
  state.session = session;
  state.entries = (session.history || []).map((h) => ({ ...h, args: h.arguments, label: labelOf(h.tool, h.arguments) }));
  localStorage.setItem(SAVED, session.session_id);
  $("start").hidden = true;
  $("game").hidden = false;
  $("meters").hidden = false;
  $("where").textContent = `Item ${session.item_id} · participant ${session.participant}`;
  document.title = `AgentHop Play · ${session.item_id}`;
  $("seed").replaceChildren(
    el("p", { class: "seed-title", text: session.seed.title }),
    el("p", { class: "row" }, el("code", { class: "pid", text: session.seed.paper_id }), paperButtons(session.seed.paper_id)));
  $("question").textContent = session.question;
  $("task").textContent = session.task;
  const options = $("options");
  options.replaceChildren(el("legend", { class: "visually-hidden", text: "Options" }));
  session.options.forEach((text, i) => {
    const letter = "ABCD"[i];
    options.append(el("label", {}, el("input", { type: "radio", name: "answer", value: letter, required: true }),
      el("span", {}, el("strong", { text: `(${letter}) ` }), text)));
  });
  // The fields belong to this attempt: nothing typed for another item stays. The paper and section of its last
  // paper action come back (after a reload too), so "s", a section and Read go on where the person was.
  for (const id of ["note", "reason", "query", "paper-id", "section"]) $(id).value = "";
  const lastPaper = [...state.entries].reverse().find((e) => e.args && e.args.paper_id);
  if (lastPaper) {
    $("paper-id").value = lastPaper.args.paper_id;
    if (lastPaper.tool === "read_section") $("section").value = lastPaper.args.section || "";
  }
  $("elsewhere").hidden = true;
  hideOver();
  $("results").replaceChildren(...state.entries.map(renderEntry));
  $("no-results").hidden = state.entries.length > 0;
  update(session);
}

function update(session) {
  state.session = { ...state.session, ...session };
  const s = state.session;
  const caps = s.caps;
  $("turns").textContent = caps.max_turns === null ? `Action ${s.turns}` : `Action ${s.turns} of ${caps.max_turns}`;
  const meter = $("budget-meter");
  if (caps.budget === null) {
    meter.hidden = true;
    $("budget-text").textContent = `${s.budget_used} used (no limit)`;
  } else {
    meter.hidden = false;
    meter.max = caps.budget;
    meter.value = s.budget_used;
    $("budget-text").textContent = `${s.budget_used} of ${caps.budget} used, ${caps.budget - s.budget_used} left`;
  }
  setEnabled(!s.ended && !state.busy);
  markAffordable();
  $("give-up").hidden = s.ended;
  showEnding(s);
}

function left() {
  const s = state.session;
  return !s || s.caps.budget === null ? Infinity : s.caps.budget - s.budget_used;
}

// Buttons whose cost the budget cannot pay say so before they are pressed.
function markAffordable() {
  const remaining = left();
  for (const button of document.querySelectorAll("[data-cost]")) {
    const over = Number(button.dataset.cost) > remaining;
    button.classList.toggle("over", over);
    if (over) button.title = `Costs ${button.dataset.cost}; ${remaining} left: the call would be refused`;
    else button.removeAttribute("title");
  }
}

function setEnabled(enabled) {
  for (const node of document.querySelectorAll("[data-action], #options input")) node.disabled = !enabled;
  for (const node of document.querySelectorAll("#results button, #seed button")) node.disabled = !enabled;
}

function showEnding(session) {
  const box = $("ending");
  if (!session.ended) { box.hidden = true; return; }
  box.hidden = false;
  $("elsewhere").hidden = true;  // the end screen says what happened; the attempt no longer changes anywhere
  const reveal = session.reveal;
  const right = reveal && session.answer === reveal.correct;
  // The box's colour is the outcome's: green only for a right answer, red for a wrong one, neutral when unknown.
  box.className = `ending ${reveal ? (right ? "right" : "wrong") : "unknown"}`;
  $("ending-title").textContent = reveal ? (right ? "Correct" : session.answer ? "Not correct" : "No answer") : "The attempt has ended";
  $("ending-text").textContent = TERMINATIONS[session.termination] || `The attempt ended (${session.termination}).`;
  const caps = session.caps;
  const rows = [
    ["Your answer", session.answer || "none"],
    ["Points used", caps.budget === null ? String(session.budget_used) : `${session.budget_used} of ${caps.budget}`],
    ["Actions", caps.max_turns === null ? String(session.turns) : `${session.turns} of ${caps.max_turns}`],
    ["Sections read", String(session.reads ?? 0)],
  ];
  if (reveal) rows.splice(1, 0, ["Correct answer", reveal.correct]);
  $("ending-stats").replaceChildren(...rows.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })]));
  const out = $("reveal");
  out.replaceChildren();
  if (reveal) {
    out.append(el("p", { text: "The evidence was in:" }), el("ul", { class: "gold" }, reveal.papers.map((p) =>
      el("li", {}, `${p.title || "(untitled)"} `, el("code", { class: "pid", text: p.paper_id })))));
  } else {
    out.append(el("p", { class: "note", text: "The correct answer is not shown: this server runs without reveal (as in a study)." }));
  }
  out.append(scoringNote(session));
  offerNext(session.participant);
  for (const option of document.querySelectorAll("#options label")) {
    const letter = option.querySelector("input").value;
    option.classList.toggle("chosen", letter === session.answer);
    option.classList.toggle("correct", Boolean(reveal) && letter === reveal.correct);
  }
}

// Where the attempt is, and the command that scores it like any agent run.
function scoringNote(session) {
  const config = state.config || {};
  const target = `${config.log || "LOG"}::${session.run}`;
  return el("div", { class: "scoring" },
    el("p", {}, "This attempt is logged in ", el("code", { text: config.log || "the server's checkpoint log" }),
      ` as run ${session.run} (session ${shortId(session.session_id, 12)}). Score it like any agent run:`),
    el("pre", { text: `agenthop-scorer '${target}' --corpus '${config.corpus || "CORPUS"}' --out report/${session.run} --view` }));
}

// The end screen offers the next item only when there is one.
async function offerNext(participant) {
  const button = $("next-item");
  try {
    const list = await api("GET", `/items?participant=${encodeURIComponent(participant)}`);
    button.disabled = list.next === null;
    button.textContent = list.next === null ? "No unplayed item left" : `Next unplayed item (${list.next})`;
  } catch (_) {
    button.disabled = false;  // the list could not be read: let the press say why
  }
}

function labelOf(tool, args) {
  switch (tool) {
    case "search_papers": return `search "${short(args.query || "")}"`;
    case "read_section": return `read ${short(String(args.section || ""), 30)} of ${shortId(String(args.paper_id || ""))}`;
    case "think": return "note";
    case "submit_answer": return `answer ${args.answer}`;
    default: return `${TOOL_LABELS[tool] || tool} ${shortId(String(args.paper_id || ""))}`;
  }
}

async function act(tool, args) {
  if (state.busy || !state.session || state.session.ended) return;
  const cost = costOf(tool);
  if (cost > left() && !(state.pending && state.pending.confirmed)) { askOver(tool, args, cost); return; }
  hideOver();
  state.busy = true;
  setEnabled(false);
  showProblem("");
  const label = labelOf(tool, args);
  try {
    const result = await api("POST", `/sessions/${encodeURIComponent(state.session.session_id)}/call`, { tool, arguments: args });
    const entry = { tool, args, label, turn: result.turns, text: result.text, data: result.data, is_error: result.is_error };
    state.entries.push(entry);
    const node = renderEntry(entry);
    $("results").append(node);
    $("no-results").hidden = true;
    state.busy = false;
    update(result);
    tellOtherTabs();
    if (result.turns !== state.entries.length) {  // another tab acted on this attempt: show every action, in order
      await refreshFromServer("This attempt is also open in another tab: its actions are shown here too.");
      const heads = resultHeadings();
      if (heads.length) heads[heads.length - 1].focus();
      return;
    }
    if (result.ended) {
      $("ending-title").focus();
      announce(`${TERMINATIONS[result.termination] || "The attempt ended."}`);
    } else {
      node.querySelector("h3").focus();
      announce(`${label}: ${result.data.outcome}. Budget ${result.budget_used} used.`);
    }
  } catch (err) {
    state.busy = false;
    setEnabled(!state.session.ended);
    showProblem(`The call did not go through: ${err.message}`);
  }
}

// A call the budget cannot pay: say so, and let the person decide (the server refuses it, as for an agent).
function askOver(tool, args, cost) {
  const last = state.entries[state.entries.length - 1];
  const second = last && last.data && last.data.outcome === "budget_rejected";
  $("over-text").textContent = `${labelOf(tool, args)} costs ${plural(cost, "point")}, and ${plural(left(), "point")} ${left() === 1 ? "is" : "are"} left. `
    + "The server will refuse the call (a refusal costs nothing)"
    + (second ? ", and this would be the second refusal in a row: it ends the attempt." : "; two refusals in a row end the attempt.");
  state.pending = { tool, args };
  $("over-budget").hidden = false;
  $("over-cancel").focus();
}

function hideOver() {
  state.pending = null;
  $("over-budget").hidden = true;
}

// --- rendering results ------------------------------------------------------------------------------------

function body(text) {
  // The result text without its status line (shown in the header of the card).
  const cut = text.lastIndexOf("\n\n[");
  return forPeople(cut >= 0 ? text.slice(0, cut) : text);
}

// The server words its refusals for an agent ("Call submit_answer now"); a person has a form and an attempt.
// "Text as an agent sees it" keeps the agent's words.
function forPeople(text) {
  return text
    .replace("Call submit_answer now with your best answer; another rejected call in a row ends the session.",
      "Submit your answer now (it is free), or give up: another refused call in a row ends the attempt.")
    .replace("[Budget spent: you must call submit_answer now with your best answer.]",
      "[Budget spent: submit your answer now (it is free).]")
    .replace("so the session has ended (budget); submit_answer is no longer accepted.",
      "so the attempt has ended (budget); no answer can be submitted any more.");
}

function paperButtons(paperId) {
  return el("span", { class: "paper-actions" }, Object.entries(TOOL_LABELS).map(([tool, text]) =>
    // The accessible name starts with the visible text ("Info 1"), then says which paper (WCAG 2.5.3, label in name).
    el("button", { type: "button", "data-cost": "1", onclick: () => paperAction(tool, paperId) },
      `${text} `, el("span", { class: "cost", text: "1" }), el("span", { class: "visually-hidden", text: ` point, paper ${paperId}` }))));
}

function paperItem(p, extra) {
  return el("li", { class: "paper" },
    el("div", {}, p.rank !== undefined ? `[${p.rank}] ` : "", el("span", { class: "title", text: p.title }),
      ` (${p.year ?? "n.d."}) · full text: ${p.has_text ? "yes" : "no"}`),
    extra,
    el("div", { class: "row" }, el("code", { class: "pid", text: p.paper_id }), paperButtons(p.paper_id)));
}

function readButton(paperId, section, text) {
  return el("button", { type: "button", "data-cost": "5", onclick: () => readAction(paperId, section) }, text, " ", el("span", { class: "cost", text: "5" }));
}

function renderContent(entry) {
  const d = entry.data || {};
  if (entry.is_error) {
    const parts = [el("p", { class: "message", text: body(entry.text) })];
    if (Array.isArray(d.candidates) && d.candidates.length) {
      parts.push(el("ul", { class: "sections" }, d.candidates.map((c) =>
        el("li", {}, readButton(d.paper_id, c.alias, `Read (${c.alias})`), el("span", { text: c.header })))));
    }
    return parts;
  }
  switch (entry.tool) {
    case "search_papers":
      if (!d.results.length) return [el("p", { class: "message", text: body(entry.text) })];
      return [el("ol", { class: "papers" }, d.results.map((p) => paperItem(p, p.abstract ? el("p", { class: "abstract", text: p.abstract }) : null)))];
    case "get_references":
      if (!d.references.length) return [el("p", { class: "message", text: body(entry.text) })];
      return [el("ol", { class: "papers" }, d.references.map((p) => paperItem(p, p.context ? el("blockquote", { text: `Cited as: "${p.context}"` }) : null)))];
    case "get_paper_info": {
      const p = d.paper;
      return [el("ul", { class: "papers" }, paperItem(p, [
        el("p", { class: "abstract" }, el("strong", { text: "Authors: " }), p.authors.length ? p.authors.join(", ") : "unknown",
          el("br"), el("strong", { text: "Venue: " }), p.venue || "unknown"),
        el("p", { class: "abstract" }, el("strong", { text: "Abstract: " }), p.abstract || "(not available)")]))];
    }
    case "list_sections":
      return [el("p", { class: "row" }, el("span", { class: "title", text: d.title }), el("code", { class: "pid", text: d.paper_id })),
        el("ul", { class: "sections" }, d.sections.map((s) => el("li", {},
          readButton(d.paper_id, s.alias, `Read (${s.alias})`), el("span", { text: s.header }),
          el("span", { class: "len", text: `${s.chars.toLocaleString("en")} chars` }))))];
    case "read_section":
      return [el("div", { class: "section-text", tabindex: "0", role: "region", "aria-label": `Section text, action ${entry.turn}`, text: body(entry.text) })];
    default:
      return [el("p", { class: "message", text: body(entry.text) })];
  }
}

function renderEntry(entry) {
  const d = entry.data || {};
  const budget = d.budget_total === null || d.budget_total === undefined ? `${d.budget_used} used` : `${d.budget_used} of ${d.budget_total} used`;
  const outcome = d.outcome && d.outcome !== "ok" ? ` · ${d.outcome.replaceAll("_", " ")}` : "";
  const node = el("li", { class: entry.is_error ? "result error" : "result" },
    el("h3", { tabindex: "-1" }, el("span", { text: `${entry.turn}. ${entry.label}` }),
      el("span", { class: "meta", text: `cost ${d.cost ?? 0} · budget ${budget}${outcome}` })),
    renderContent(entry));
  if (entry.tool !== "read_section" || entry.is_error) {  // a read's text is the agent's already; an error's is reworded
    node.append(el("details", { class: "raw" }, el("summary", { text: "Text as an agent sees it" }), el("pre", { text: entry.text })));
  }
  return node;
}

// --- actions ----------------------------------------------------------------------------------------------

function short(text, n = 40) { return text.length > n ? `${text.slice(0, n)}…` : text; }

// The paper and section fields show what the last paper action used; a new paper clears the section.
function usePaper(paperId) {
  if ($("paper-id").value.trim() !== paperId) $("section").value = "";
  $("paper-id").value = paperId;
}

function paperAction(tool, paperId) {
  usePaper(paperId);
  act(tool, { paper_id: paperId });
}

function readAction(paperId, section) {
  usePaper(paperId);
  $("section").value = section;
  act("read_section", { paper_id: paperId, section });
}

function bindForms() {
  const topK = $("top-k");
  for (let k = 1; k <= 10; k += 1) topK.append(el("option", { value: String(k), selected: k === 5, text: `${k} results` }));

  $("who").addEventListener("submit", (e) => { e.preventDefault(); askedForList = true; loadItems(); });
  $("key-form").addEventListener("submit", (e) => { e.preventDefault(); enterKey(); });
  $("play-next").addEventListener("click", () => start(null));
  $("next-item").addEventListener("click", () => { localStorage.removeItem(SAVED); start(null); });
  $("back").addEventListener("click", () => { localStorage.removeItem(SAVED); state.session = null; showStart(); });

  $("search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const query = $("query").value.trim();
    if (!query) { $("query").reportValidity(); return; }
    act("search_papers", { query, top_k: Number(topK.value) });
  });
  for (const button of document.querySelectorAll("#paper-form button[data-tool]")) {
    button.addEventListener("click", () => {
      const paperId = $("paper-id").value.trim();
      if (!paperId) {
        const field = $("paper-id");
        field.setCustomValidity("Name a paper: type its ID here (i), or press a paper's Sections or Read button in the results.");
        field.reportValidity();
        field.setCustomValidity("");
        return;
      }
      if (button.dataset.tool === "read_section") {
        const section = $("section").value.trim();
        if (!section) { $("section").setCustomValidity("Name a section"); $("section").reportValidity(); $("section").setCustomValidity(""); return; }
        readAction(paperId, section);
      } else {
        paperAction(button.dataset.tool, paperId);
      }
    });
  }
  // Typing another paper ID makes the section name meaningless.
  let typedFor = "";
  $("paper-id").addEventListener("focus", () => { typedFor = $("paper-id").value.trim(); });
  $("paper-id").addEventListener("change", () => { if ($("paper-id").value.trim() !== typedFor) $("section").value = ""; });
  $("paper-form").addEventListener("submit", (e) => e.preventDefault());
  $("note-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const reasoning = $("note").value;
    if (!reasoning.trim()) { $("note").focus(); return; }
    act("think", { reasoning });
  });
  $("answer-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const chosen = document.querySelector("#options input:checked");
    if (!chosen || !$("reason").value.trim()) { $("answer-form").reportValidity(); return; }
    act("submit_answer", { answer: chosen.value, reasoning: $("reason").value });
  });
  $("note").addEventListener("keydown", (e) => { if (e.key === "Enter" && e.ctrlKey) { e.preventDefault(); $("note-form").requestSubmit(); } });
  $("reason").addEventListener("keydown", (e) => { if (e.key === "Enter" && e.ctrlKey) { e.preventDefault(); $("answer-form").requestSubmit(); } });
  $("over-cancel").addEventListener("click", () => { hideOver(); announce("Call cancelled."); });
  $("over-go").addEventListener("click", () => {
    const pending = state.pending;
    if (pending) { pending.confirmed = true; act(pending.tool, pending.args); }
  });

  // Giving up takes two presses, so one stray key cannot end an attempt.
  const giveUp = $("give-up");
  giveUp.addEventListener("click", async () => {
    if (giveUp.dataset.armed !== "yes") {
      giveUp.dataset.armed = "yes";
      giveUp.textContent = "Press again to give up";
      giveUp.classList.add("danger");
      return;
    }
    disarm();
    try {
      update(await api("POST", `/sessions/${encodeURIComponent(state.session.session_id)}/end`, {}));
      tellOtherTabs();
      $("ending-title").focus();
    } catch (err) { showProblem(`Cannot give up: ${err.message}`); }
  });
  giveUp.addEventListener("blur", disarm);
}

function disarm() {
  const giveUp = $("give-up");
  giveUp.dataset.armed = "";
  giveUp.textContent = "Give up";
  giveUp.classList.remove("danger");
}

// --- keyboard ---------------------------------------------------------------------------------------------

function resultHeadings() { return [...document.querySelectorAll("#results h3")]; }

function moveResult(step) {
  const heads = resultHeadings();
  if (!heads.length) return;
  const at = heads.indexOf(document.activeElement);
  const next = at < 0 ? heads.length - 1 : Math.min(heads.length - 1, Math.max(0, at + step));
  heads[next].focus();
}

function bindKeys() {
  document.addEventListener("keydown", (e) => {
    const target = e.target;
    const typing = isTyping(target);
    if (e.key === "Escape") {
      if (help.isOpen()) { help.close(); return; }
      if (!$("over-budget").hidden) { hideOver(); return; }
      if (typing) target.blur();
      return;
    }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "?") { help.toggle(); e.preventDefault(); return; }
    if ($("game").hidden) return;
    const focus = { "/": "query", i: "paper-id", s: "section", n: "note", t: "item" }[e.key];
    if (focus) {
      $(focus).focus();
      // A one-line field's old value is selected, so what is typed replaces it (an ID typed after "i" is never
      // appended to the last one: that would be a "not found" call that costs a point).
      if ($(focus).matches("input")) $(focus).select();
      e.preventDefault();
      return;
    }
    if (e.key === "a") {
      const radio = document.querySelector("#options input:checked") || document.querySelector("#options input");
      if (radio) radio.focus();
      e.preventDefault();
    } else if (e.key === "l") { moveResult(Infinity); e.preventDefault(); }
    else if (e.key === "j") { moveResult(1); e.preventDefault(); }
    else if (e.key === "k") { moveResult(-1); e.preventDefault(); }
  });
}

// --- start-up ---------------------------------------------------------------------------------------------

// The attempt this browser was in, if the server still runs it: true when it is shown; otherwise why it was lost.
async function resume() {
  const saved = localStorage.getItem(SAVED);
  if (!saved) return "";
  try {
    const session = await api("GET", `/sessions/${encodeURIComponent(saved)}`);
    state.participant = session.participant;
    enterSession(session);
    return true;
  } catch (err) {
    if (err instanceof Unreachable) throw err;
    localStorage.removeItem(SAVED);
    return `Your last attempt cannot be shown: ${err.message}.`;
  }
}

async function main() {
  help = helpPanel("help-toggle", "help");
  bindForms();
  bindKeys();
  try {
    state.config = await api("GET", "/config");
    describeRules(state.config);
  } catch (err) { showProblem(`Cannot start: ${err.message}`); return; }
  const input = $("participant");
  if (state.config.participant) {
    input.value = state.config.participant;
    input.readOnly = true;
    $("participant-note").textContent = "set by the server";
  } else if (!input.value) {
    // Only into an empty field: a name typed while the page was still loading stays (it was wiped before, and the
    // Enter that followed then submitted nothing).
    input.value = localStorage.getItem("agenthop-participant") || "";
  }
  if (tabs) {
    window.addEventListener("pagehide", () => {
      if (state.session) tabs.postMessage({ session: state.session.session_id, left: true });
    });
    tabs.addEventListener("message", (e) => {
      if (state.session && e.data && e.data.session === state.session.session_id && e.data.left) { otherTabLeft(); return; }
      if (state.session && e.data && e.data.session === state.session.session_id && !state.busy) {
        refreshFromServer("This attempt is also open in another tab: what was done there is shown here.");
      }
    });
  }
  let lost = "";
  try {
    lost = await resume();
    if (lost === true) {
      // Back where the person was: on the latest result (the results scroll to it), or on the item when there is none.
      const heads = resultHeadings();
      if (state.session.ended) $("ending-title").focus();
      else if (heads.length) heads[heads.length - 1].focus();
      else $("item").focus();
      return;
    }
  } catch (err) { showProblem(err.message); return; }
  if (!askedForList) {  // else the person's Enter listed the items already
    // The name field has the focus either way: no Tab is needed to type or change the name.
    if (!input.readOnly) input.focus();
    if (input.value) await loadItems();
  }
  if (lost) showProblem(lost);
}

main();
