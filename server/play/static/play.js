// AgentHop Play: a person works an item with the seven tools. Every action is one POST to the play API,
// which passes it to the session's metering (Session.call) exactly as an MCP tools/call would be.
// All text from the server is inserted with textContent: paper text is untrusted data.
"use strict";

const API = "/play/api";
const SAVED = "agenthop-play";  // sessionStorage: the running attempt, so a reload does not lose it
const TERMINATIONS = {
  answer: "You submitted an answer.",
  budget: "The attempt ended: two calls in a row were rejected because the budget could not pay for them.",
  max_turns: "The attempt ended: every turn was used without submitting an answer.",
  abandoned: "You gave up on this item.",
  token_limit: "The attempt ended at the token cap.",
  error: "The attempt ended with an error.",
};

const $ = (id) => document.getElementById(id);
const state = { config: null, participant: null, session: null, entries: [], busy: false };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function announce(text) { $("announce").textContent = text; }

function showProblem(text) {
  const p = $("problem");
  p.textContent = text || "";
  p.hidden = !text;
}

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(API + path, init);
  let data = null;
  try { data = await response.json(); } catch (_) { data = null; }
  if (!response.ok) {
    throw new Error((data && data.error) || `the server answered ${response.status}`);
  }
  return data;
}

// --- choosing an item ------------------------------------------------------------------------------------

async function loadItems() {
  const participant = $("participant").value.trim();
  if (!$("participant").checkValidity()) { $("participant").reportValidity(); return; }
  showProblem("");
  try {
    const list = await api("GET", `/items?participant=${encodeURIComponent(participant)}`);
    state.participant = list.participant;
    localStorage.setItem("agenthop-participant", list.participant);
    renderItems(list);
  } catch (err) { showProblem(`Cannot list the items: ${err.message}`); }
}

function renderItems(list) {
  const body = $("items");
  body.replaceChildren();
  let played = 0;
  for (const item of list.items) {
    if (item.played) played += 1;
    body.append(el("tr", { class: item.played ? "played" : null },
      el("th", { scope: "row" }, el("code", { text: item.item_id })),
      el("td", { text: item.seed_title }),
      el("td", { class: "question", text: item.question }),
      el("td", { text: item.played ? "played" : "not played" }),
      el("td", {}, el("button", { type: "button", "aria-label": `Play ${item.item_id}`, onclick: () => start(item.item_id) },
        item.played ? "Play again" : "Play"))));
  }
  $("items-caption").textContent = `Items for ${list.participant}: ${played} of ${list.items.length} played`;
  $("play-next").disabled = list.next === null;
  $("next-note").textContent = list.next === null ? "You have played every item of this list." : `Next: ${list.next}`;
  $("choice").hidden = false;
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
    state.entries = [];
    enterSession(session);
    $("task").focus();
    announce(`Item ${session.item_id} started.`);
  } catch (err) { showProblem(`Cannot start: ${err.message}`); }
}

function enterSession(session) {
  state.session = session;
  $("start").hidden = true;
  $("game").hidden = false;
  $("meters").hidden = false;
  $("where").textContent = `Item ${session.item_id} · participant ${session.participant}`;
  document.title = `AgentHop Play · ${session.item_id}`;
  // The task text as agents get it, opened at the seed paper and question (the instructions are above, one scroll away).
  const task = $("task");
  const cut = session.task.indexOf("Seed paper\n");
  const part = el("span", { id: "task-item", text: cut >= 0 ? session.task.slice(cut) : "" });
  task.replaceChildren(cut >= 0 ? session.task.slice(0, cut) : session.task, part);
  task.scrollTop = cut >= 0 ? part.offsetTop - 8 : 0;  // .task is positioned: offsetTop is within it
  const options = $("options");
  options.replaceChildren(el("legend", { class: "visually-hidden", text: "Options" }));
  session.options.forEach((text, i) => {
    const letter = "ABCD"[i];
    options.append(el("label", {}, el("input", { type: "radio", name: "answer", value: letter, required: true }),
      el("span", {}, el("strong", { text: `(${letter}) ` }), text)));
  });
  $("note").value = "";
  $("reason").value = "";
  $("results").replaceChildren();
  for (const entry of state.entries) $("results").append(renderEntry(entry));
  update(session);
}

function save() {
  if (!state.session) return;
  sessionStorage.setItem(SAVED, JSON.stringify({ session_id: state.session.session_id, entries: state.entries }));
}

function update(session) {
  state.session = session;
  const caps = session.caps;
  $("turns").textContent = caps.max_turns === null ? `Turn ${session.turns}` : `Turn ${session.turns} of ${caps.max_turns}`;
  const meter = $("budget-meter");
  if (caps.budget === null) {
    meter.hidden = true;
    $("budget-text").textContent = `${session.budget_used} used (no limit)`;
  } else {
    meter.hidden = false;
    meter.max = caps.budget;
    meter.value = session.budget_used;
    $("budget-text").textContent = `${session.budget_used} of ${caps.budget} used (${caps.budget - session.budget_used} left)`;
  }
  setEnabled(!session.ended && !state.busy);
  $("give-up").hidden = session.ended;
  showEnding(session);
  save();
}

function setEnabled(enabled) {
  for (const node of document.querySelectorAll("[data-action], #options input")) node.disabled = !enabled;
  for (const node of document.querySelectorAll("#results button")) node.disabled = !enabled;
}

function showEnding(session) {
  const box = $("ending");
  if (!session.ended) { box.hidden = true; return; }
  box.hidden = false;
  box.className = `ending ${session.termination}`;
  const text = [TERMINATIONS[session.termination] || `The attempt ended (${session.termination}).`];
  if (session.answer) text.push(`Your answer: ${session.answer}.`);
  $("ending-text").textContent = text.join(" ");
  const reveal = $("reveal");
  reveal.replaceChildren();
  if (session.reveal) {
    const right = session.answer === session.reveal.correct;
    reveal.append(el("p", { class: "verdict" }, `Correct answer: ${session.reveal.correct}. `,
      session.answer ? (right ? "Yours is correct." : "Yours is not.") : ""));
    reveal.append(el("p", {}, "Gold paper(s): "), el("ul", {}, session.reveal.papers.map((p) =>
      el("li", {}, `${p.title || "(untitled)"} `, el("code", { class: "pid", text: p.paper_id })))));
  } else {
    reveal.append(el("p", { class: "note", text: "The correct answer is not shown: this server runs without reveal (as in a study)." }));
  }
}

async function act(tool, args, label) {
  if (state.busy || !state.session || state.session.ended) return;
  state.busy = true;
  setEnabled(false);
  showProblem("");
  try {
    const result = await api("POST", `/sessions/${encodeURIComponent(state.session.session_id)}/call`, { tool, arguments: args });
    const entry = { tool, args, label, turn: result.turns, text: result.text, data: result.data, is_error: result.is_error };
    state.entries.push(entry);
    const node = renderEntry(entry);
    $("results").append(node);
    state.busy = false;
    update(result);
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

// --- rendering results ------------------------------------------------------------------------------------

function body(text) {
  // The result text without its status line (shown in the header of the card).
  const cut = text.lastIndexOf("\n\n[");
  return cut >= 0 ? text.slice(0, cut) : text;
}

function paperButtons(paperId) {
  return el("p", { class: "row" },
    el("button", { type: "button", onclick: () => paperAction("get_paper_info", paperId) }, "Info ", el("span", { class: "cost", text: "1" })),
    el("button", { type: "button", onclick: () => paperAction("get_references", paperId) }, "References ", el("span", { class: "cost", text: "1" })),
    el("button", { type: "button", onclick: () => paperAction("list_sections", paperId) }, "Sections ", el("span", { class: "cost", text: "1" })));
}

function paperItem(p, extra) {
  return el("li", { class: "paper" },
    el("div", {}, p.rank !== undefined ? `[${p.rank}] ` : "", el("span", { class: "title", text: p.title }),
      ` (${p.year ?? "n.d."}) · full text: ${p.has_text ? "yes" : "no"}`),
    el("div", { class: "pid mono", text: p.paper_id }),
    extra,
    paperButtons(p.paper_id));
}

function readButton(paperId, section, text) {
  return el("button", { type: "button", onclick: () => readAction(paperId, section) }, text, " ", el("span", { class: "cost", text: "5" }));
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
      return [el("p", {}, el("span", { class: "title", text: d.title }), " ", el("span", { class: "pid mono", text: d.paper_id })),
        el("ul", { class: "sections" }, d.sections.map((s) => el("li", {},
          readButton(d.paper_id, s.alias, `Read (${s.alias})`), el("span", { text: s.header }),
          el("span", { class: "len", text: `${s.chars.toLocaleString("en")} chars` }))))];
    case "read_section":
      return [el("div", { class: "section-text", tabindex: "0", role: "region", "aria-label": `Section text, turn ${entry.turn}`, text: body(entry.text) })];
    default:
      return [el("p", { class: "message", text: body(entry.text) })];
  }
}

function renderEntry(entry) {
  const d = entry.data || {};
  const budget = d.budget_total === null || d.budget_total === undefined ? `${d.budget_used} used` : `${d.budget_used}/${d.budget_total} used`;
  const outcome = d.outcome && d.outcome !== "ok" ? ` · ${d.outcome.replace("_", " ")}` : "";
  const node = el("li", { class: entry.is_error ? "result error" : "result", role: entry.is_error ? "group" : null },
    el("h3", { tabindex: "-1" }, el("span", { text: `Turn ${entry.turn} · ${entry.label}` }),
      el("span", { class: "meta", text: `cost ${d.cost ?? 0} · budget ${budget}${outcome}` })),
    renderContent(entry));
  if (entry.tool !== "read_section" && !entry.is_error) {
    node.append(el("details", { class: "raw" }, el("summary", { text: "Text as an agent sees it" }), el("pre", { text: entry.text })));
  }
  return node;
}

// --- actions ----------------------------------------------------------------------------------------------

function short(text, n = 40) { return text.length > n ? `${text.slice(0, n)}…` : text; }

function paperAction(tool, paperId) {
  $("paper-id").value = paperId;
  act(tool, { paper_id: paperId }, `${tool}(${short(paperId, 14)})`);
}

function readAction(paperId, section) {
  $("paper-id").value = paperId;
  $("section").value = section;
  act("read_section", { paper_id: paperId, section }, `read_section(${short(paperId, 14)}, ${short(section, 30)})`);
}

function bindForms() {
  const topK = $("top-k");
  for (let k = 1; k <= 10; k += 1) topK.append(el("option", { value: String(k), selected: k === 5, text: `${k} results` }));

  $("who").addEventListener("submit", (e) => { e.preventDefault(); loadItems(); });
  $("play-next").addEventListener("click", () => start(null));
  $("next-item").addEventListener("click", () => { sessionStorage.removeItem(SAVED); start(null); });
  $("back").addEventListener("click", () => { sessionStorage.removeItem(SAVED); state.session = null; showStart(); });

  $("search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const query = $("query").value.trim();
    if (!query) { $("query").reportValidity(); return; }
    act("search_papers", { query, top_k: Number(topK.value) }, `search_papers("${short(query)}")`);
  });
  for (const button of document.querySelectorAll("#paper-form button[data-tool]")) {
    button.addEventListener("click", () => {
      const paperId = $("paper-id").value.trim();
      if (!paperId) { $("paper-id").reportValidity(); return; }
      if (button.dataset.tool === "read_section") {
        const section = $("section").value.trim();
        if (!section) { $("section").setCustomValidity("Name a section"); $("section").reportValidity(); $("section").setCustomValidity(""); return; }
        readAction(paperId, section);
      } else {
        paperAction(button.dataset.tool, paperId);
      }
    });
  }
  $("paper-form").addEventListener("submit", (e) => e.preventDefault());
  $("note-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const reasoning = $("note").value;
    if (!reasoning.trim()) { $("note").focus(); return; }
    act("think", { reasoning }, `think("${short(reasoning.trim())}")`);
  });
  $("answer-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const chosen = document.querySelector("#options input:checked");
    if (!chosen || !$("reason").value.trim()) { $("answer-form").reportValidity(); return; }
    act("submit_answer", { answer: chosen.value, reasoning: $("reason").value }, `submit_answer(${chosen.value})`);
  });
  $("note").addEventListener("keydown", (e) => { if (e.key === "Enter" && e.ctrlKey) { e.preventDefault(); $("note-form").requestSubmit(); } });
  $("reason").addEventListener("keydown", (e) => { if (e.key === "Enter" && e.ctrlKey) { e.preventDefault(); $("answer-form").requestSubmit(); } });

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

function toggleHelp(show) {
  const help = $("help");
  help.hidden = show === undefined ? !help.hidden : !show;
  $("help-toggle").setAttribute("aria-expanded", String(!help.hidden));
}

function resultHeadings() { return [...document.querySelectorAll("#results h3")]; }

function moveResult(step) {
  const heads = resultHeadings();
  if (!heads.length) return;
  const at = heads.indexOf(document.activeElement);
  const next = at < 0 ? heads.length - 1 : Math.min(heads.length - 1, Math.max(0, at + step));
  heads[next].focus();
}

function bindKeys() {
  $("help-toggle").addEventListener("click", () => toggleHelp());
  document.addEventListener("keydown", (e) => {
    const target = e.target;
    const typing = target instanceof HTMLElement && (target.matches("input:not([type=radio]), textarea, select") || target.isContentEditable);
    if (e.key === "Escape") {
      if (!$("help").hidden) { toggleHelp(false); $("help-toggle").focus(); return; }
      if (typing) target.blur();
      return;
    }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "?") { toggleHelp(); e.preventDefault(); return; }
    if ($("game").hidden) return;
    const focus = { "/": "query", i: "paper-id", s: "section", n: "note", t: "task" }[e.key];
    if (focus) { $(focus).focus(); e.preventDefault(); return; }
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

async function resume() {
  const saved = JSON.parse(sessionStorage.getItem(SAVED) || "null");
  if (!saved) return false;
  try {
    const session = await api("GET", `/sessions/${encodeURIComponent(saved.session_id)}`);
    state.participant = session.participant;
    state.entries = saved.entries || [];
    enterSession(session);
    return true;
  } catch (_) {
    sessionStorage.removeItem(SAVED);
    return false;
  }
}

async function main() {
  bindForms();
  bindKeys();
  try {
    state.config = await api("GET", "/config");
  } catch (err) { showProblem(`Cannot reach the server: ${err.message}`); return; }
  const input = $("participant");
  if (state.config.participant) {
    input.value = state.config.participant;
    input.readOnly = true;
    $("participant-note").textContent = "set by the server";
  } else {
    input.value = localStorage.getItem("agenthop-participant") || "";
  }
  if (await resume()) return;
  if (input.value) await loadItems();
  else input.focus();
}

main();
