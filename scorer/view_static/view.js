// AgentHop trajectory viewer: an index of every scored session (inline), each session loaded from
// sessions/RUN/N.js when opened (script elements work from file://, fetch does not).
// Texts from logs and papers are inserted with textContent only.
"use strict";

(function () {
  const INDEX = JSON.parse(document.getElementById("view-index").textContent);
  const LONG = 700;  // result texts longer than this are collapsed
  const AUDIT = {
    correct: "Correct",
    incorrect_inspected: "Incorrect, target inspected",
    incorrect_exposed: "Incorrect, target exposed but not inspected",
    incorrect_neither: "Incorrect, neither",
    unobservable: "Unobservable (no log)",
  };
  const cache = new Map();
  const $ = window.AgentHopDOM.byId;
  const runs = new Map(INDEX.runs.map((r) => [r.key, r]));
  let shown = [];        // rows passing the filters
  let route = {};        // the parsed location hash
  const steppers = [];   // one per side shown: {calls, at, list}
  let active = 0;        // the side j/k step

  window.AgentHopView = { load(data) { cache.set(`${data.run}/${data.item_id}`, data); } };
  const { el, isTyping, helpPanel, shortId } = window.AgentHopDOM;
  let help = null;

  function link(params) {
    const parts = Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== "")
      .map(([k, v]) => `${k}=${encodeURIComponent(v)}`);
    return `#${parts.join("&")}`;
  }

  function parseHash() {
    const out = {};
    for (const part of location.hash.replace(/^#/, "").split("&")) {
      if (!part) continue;
      const at = part.indexOf("=");
      if (at > 0) out[part.slice(0, at)] = decodeURIComponent(part.slice(at + 1));
    }
    return out;
  }

  function rowOf(run, item) { return INDEX.rows.find((r) => r.run === run && r.item_id === item); }

  function loadSession(row) {
    const key = `${row.run}/${row.item_id}`;
    if (cache.has(key)) return Promise.resolve(cache.get(key));
    return new Promise((resolve, reject) => {
      const script = el("script", { src: row.file });
      script.addEventListener("load", () => (cache.has(key) ? resolve(cache.get(key)) : reject(new Error(`${row.file} holds no session`))));
      script.addEventListener("error", () => reject(new Error(`cannot load ${row.file}`)));
      document.head.append(script);
    });
  }

  // --- the list -----------------------------------------------------------------------------------------

  function fillSelect(id, label, values) {
    const select = $(id);
    select.append(el("option", { value: "", text: `all ${label}` }));
    for (const [value, text] of values) select.append(el("option", { value, text }));
    select.addEventListener("change", renderList);
  }

  function distinct(key) { return [...new Set(INDEX.rows.map((r) => r[key]).filter((v) => v !== null && v !== undefined))].sort(); }

  function setupFilters() {
    fillSelect("f-run", "runs", INDEX.runs.map((r) => [r.key, r.name]));
    fillSelect("f-cell", "cells", distinct("cell").map((c) => [c, c]));
    fillSelect("f-reasoning", "types", distinct("reasoning_type").map((c) => [c, c]));
    fillSelect("f-correct", "outcomes", [["1", "correct"], ["0", "incorrect"]]);
    fillSelect("f-audit", "categories", Object.entries(AUDIT).filter(([k]) => INDEX.rows.some((r) => r.audit === k)));
    $("f-item").addEventListener("input", renderList);
    $("filters").addEventListener("submit", (e) => e.preventDefault());
  }

  function renderList() {
    const f = { run: $("f-run").value, cell: $("f-cell").value, reasoning: $("f-reasoning").value,
                correct: $("f-correct").value, audit: $("f-audit").value, item: $("f-item").value.trim().toLowerCase() };
    shown = INDEX.rows.filter((r) => (!f.run || r.run === f.run) && (!f.cell || r.cell === f.cell)
      && (!f.reasoning || r.reasoning_type === f.reasoning) && (!f.correct || String(r.correct) === f.correct)
      && (!f.audit || r.audit === f.audit) && (!f.item || r.item_id.toLowerCase().includes(f.item)));
    const body = $("rows");
    const several = INDEX.runs.length > 1;
    let currentRow = null;
    body.replaceChildren(...shown.map((r) => {
      const current = r.run === route.run && r.item_id === route.item;
      const run = runs.get(r.run);
      const who = r.participant ? `${run.name} (${r.participant})` : run.name;
      const row = el("tr", { class: [current ? "current" : "", r.observed ? "" : "unobserved"].join(" ").trim() || null,
                             "data-run": r.run, "data-item": r.item_id },
        el("td", { class: "item" }, r.observed ? el("a", { href: link({ run: r.run, item: r.item_id }), "aria-current": current ? "true" : null, text: r.item_id })
                                               : el("span", { text: r.item_id, title: "no log" }),
          several || r.participant ? el("span", { class: "who", text: who }) : null),
        el("td", { text: r.cell }),
        el("td", { class: r.correct ? "ok" : "no", title: `answered ${r.answer || "nothing"}; the correct option is ${r.correct_letter}`,
                   text: `${r.answer || "-"} / ${r.correct_letter} ${r.correct ? "✓" : "✗"}` }),
        el("td", { text: AUDIT[r.audit].replace("Incorrect, ", "").replace(" but not inspected", "") }),
        el("td", { class: "num", text: r.budget ?? "-" }));
      // The whole row opens the session (the link stays for the keyboard and for opening in a new tab).
      if (r.observed) {
        row.addEventListener("click", (e) => {
          if (e.target.closest("a")) return;
          location.hash = link({ run: r.run, item: r.item_id });
        });
      }
      if (current) currentRow = row;
      return row;
    }));
    $("count").textContent = `${shown.length} of ${INDEX.rows.length} sessions shown`;
    if (currentRow) currentRow.scrollIntoView({ block: "nearest" });
  }

  // --- one session --------------------------------------------------------------------------------------

  function argsText(args) {
    const parts = Object.entries(args || {}).map(([k, v]) => {
      const text = typeof v === "string" ? JSON.stringify(v.length > 300 ? `${v.slice(0, 300)}…` : v) : JSON.stringify(v);
      return `${k}=${text}`;
    });
    return parts.join(", ");
  }

  function markNodes(call, data) {
    const marks = call.marks.map((m) => {
      const paper = `gold ${shortId(m.paper_id)}`;
      if (m.kind === "first_exposure") return el("li", { class: "mark", text: `${paper} first shown (rank ${m.rank})` });
      if (m.kind === "exposed") return el("li", { class: "mark", text: `${paper} shown again (rank ${m.rank})` });
      if (m.kind === "inspected") return el("li", { class: "mark", text: `read of ${paper}` });
      if (m.kind === "delivered") {
        return el("li", { class: m.direct_hit ? "mark hit" : "mark miss",
                          text: m.direct_hit ? `delivered a labelled section of ${paper}` : `delivered ${paper}, no labelled section` });
      }
      return el("li", { class: "mark", text: m.kind });
    });
    if (call.tool === "submit_answer" && call.outcome === "ok") {
      const right = call.arguments.answer === data.correct_letter;
      marks.push(el("li", { class: right ? "mark hit" : "mark wrong", text: `answer ${call.arguments.answer}: ${right ? "correct" : `wrong (correct: ${data.correct_letter})`}` }));
    }
    return marks.length ? el("ul", { class: "marks", "aria-label": "Scorer marks" }, marks) : null;
  }

  function resultNode(call) {
    if (call.text === null) {
      return el("p", { class: "note", text: call.text_source === "unavailable" ? "(result text not available)" : "" });
    }
    const source = call.text_source === "reproduced" ? " (reproduced from the corpus)" : "";
    if (call.text.length <= LONG) return el("pre", { class: "result", text: call.text });
    const what = `Result: ${call.text.length.toLocaleString("en")} characters${source}`;
    const summary = el("summary", { text: `${what}; show` });
    const box = el("details", { class: "long" }, summary, el("pre", { class: "result", text: call.text }));
    box.addEventListener("toggle", () => { summary.textContent = `${what}; ${box.open ? "hide" : "show"}`; });
    return box;
  }

  function callNode(call, n, data, side) {
    const refused = !call.executed;
    const gold = call.marks.length > 0;
    const total = data.caps && data.caps.budget !== null && data.caps.budget !== undefined ? `/${data.caps.budget}` : "";
    const turn = data.client && data.client.name === "human" ? "action" : "turn";  // a person's turn is one action
    const node = el("li", { class: `call${refused ? " refused" : ""}${gold ? " gold" : ""}`, tabindex: "-1", "data-seq": call.seq,
                            "aria-label": `Call ${n + 1}: ${call.tool}` },
      el("h3", {}, el("span", { text: `${n + 1}. ${call.tool}` }),
        el("span", { class: "meta", text: [call.turn !== null ? `${turn} ${call.turn}` : `${turn} n/a`, call.outcome, `cost ${call.cost}`,
          call.budget_after !== null ? `budget after ${call.budget_after}${total}` : null, call.forced ? "forced by the harness" : null]
          .filter(Boolean).join(" · ") })),
      el("p", { class: "args", text: argsText(call.arguments) }),
      markNodes(call, data),
      resultNode(call));
    node.addEventListener("focusin", () => { active = side; });
    node.addEventListener("click", () => step(side, n, false));
    return node;
  }

  function facts(data, run) {
    const client = data.client || {};
    const person = client.name === "human";
    // A person's session has no agent or model: it has a participant, who played through the play page.
    const who = person ? "" : [run.agent, run.model].filter(Boolean).join(" / ");
    const rows = [
      ["Run", `${run.name}${who ? ` (${who})` : ""}`],
      person ? ["Played by", `${client.participant || "a person"} (client human, the play page)`]
        : ["Client", `${client.name || "unknown"}${client.participant ? `, participant ${client.participant}` : ""}${client.model ? `, model ${client.model}` : ""}`],
      ["Answer", `${data.answer || "none"} (correct ${data.correct_letter}) ${data.correct ? "✓" : "✗"}`],
      ["Audit", data.audit_label],
      ["Ended by", data.termination],
      ["Budget", `${data.budget ?? "n/a"}${data.caps && data.caps.budget !== null ? ` of ${data.caps.budget}` : ""}; ${person ? "actions" : "turns"} ${data.turns ?? "n/a"}`],
      ["Recall", `paper ${data.paper_recall ? "yes" : "no"}, section ${data.section_recall ? "yes" : "no"}`],
    ];
    if (data.n_sessions > 1) rows.push(["Sessions", `${data.n_sessions} for this item; the scorer counts this one`]);
    return el("dl", { class: "facts" }, rows.map(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })]));
  }

  function goldList(data, side) {
    return el("ol", { class: "golds", "aria-label": "Gold papers" }, data.gold_papers.map((g) => {
      const e = g.exposure || {};
      const at = (seq) => data.calls.findIndex((c) => c.seq === seq);
      const parts = [el("strong", { text: g.title || "(untitled)" }), " ", el("code", { text: shortId(g.paper_id) }), ": "];
      if (e.exposed) {
        const n = at(e.seq);
        parts.push("first shown by ", el("button", { type: "button", onclick: () => step(side, n, true) }, `call ${n + 1}`),
          ` (${e.tool}, rank ${e.rank})`, e.inspected_later ? ", read later" : ", never read after");
      } else {
        parts.push("never shown");
      }
      parts.push(g.delivered ? (g.direct_hit ? "; a labelled section was delivered" : "; delivered, no labelled section") : "; no section delivered");
      return el("li", {}, parts);
    }));
  }

  function sideNode(data, side) {
    const run = runs.get(data.run);
    const list = el("ol", { class: "calls", "aria-label": `Calls of ${run.name}` }, data.calls.map((c, n) => callNode(c, n, data, side)));
    const position = el("span", { class: "note", "aria-live": "polite" });
    const prev = el("button", { type: "button", onclick: () => step(side, steppers[side].at - 1, true) }, "◀ Previous call");
    const next = el("button", { type: "button", onclick: () => step(side, steppers[side].at + 1, true) }, "Next call ▶");
    steppers[side] = { calls: data.calls, at: -1, list, position, prev, next };
    return el("section", { class: "side", "aria-label": run.name },
      el("h2", { text: `${run.name}` }),
      facts(data, run),
      el("h3", { text: "Gold papers" }), goldList(data, side),
      data.reproduced ? null : el("p", { class: "note", text: "This run was made on another corpus: texts of successful calls are not reproduced." }),
      el("div", { class: "stepper" }, prev, next, position),
      list);
  }

  function step(side, n, focus) {
    const s = steppers[side];
    if (!s || !s.calls.length) return;
    const at = Math.max(0, Math.min(s.calls.length - 1, n));
    s.at = at;
    active = side;
    [...s.list.children].forEach((node, i) => node.classList.toggle("current", i === at));
    s.position.textContent = `Call ${at + 1} of ${s.calls.length}`;
    s.prev.disabled = at === 0;
    s.next.disabled = at === s.calls.length - 1;
    const node = s.list.children[at];
    if (focus) {
      node.focus({ preventScroll: true });
      node.scrollIntoView({ block: "nearest" });
    }
  }

  function questionNode(data, answers) {
    return el("section", { class: "question", "aria-label": "Item" },
      el("h2", {}, `${data.item_id} · ${data.cell} · ${data.reasoning_type}`),
      el("p", {}, el("strong", { text: "Seed: " }), data.seed.title || "", " ", el("code", { text: shortId(data.seed.paper_id) })),
      el("p", { text: data.question || "" }),
      el("ol", { class: "options", "aria-label": "Options" }, data.options.map((text, i) => {
        const letter = "ABCD"[i];
        const who = answers.filter((a) => a.answer === letter).map((a) => a.name);
        return el("li", { class: [letter === data.correct_letter ? "correct" : "", who.length ? "answered" : ""].join(" ").trim() || null },
          el("strong", { text: `(${letter}) ` }), text,
          letter === data.correct_letter ? el("span", { class: "tag ok", text: "correct" }) : null,
          who.map((name) => el("span", { class: "tag", text: `answered by ${name}` })));
      })));
  }

  function compareSelect(data) {
    const others = INDEX.rows.filter((r) => r.item_id === data.item_id && r.run !== data.run && r.observed);
    if (!others.length) return null;
    const select = el("select", { id: "vs" }, el("option", { value: "", text: "nothing (one run)" }),
      others.map((r) => el("option", { value: r.run, selected: r.run === route.vs, text: runs.get(r.run).name })));
    select.addEventListener("change", () => { location.hash = link({ run: data.run, item: data.item_id, vs: select.value }); });
    return el("p", { class: "row" }, el("label", { for: "vs", text: "Side by side with: " }), select);
  }

  async function renderDetail() {
    route = parseHash();
    renderList();
    const detail = $("detail");
    steppers.length = 0;
    active = 0;
    if (route.item && !route.run) {
      // An item alone (#item=st_0003): its session when one run has it; else the runs that do, to choose from.
      const found = INDEX.rows.filter((r) => r.item_id === route.item);
      if (found.length === 1) {
        history.replaceState(null, "", link({ run: found[0].run, item: route.item, call: route.call }));
        route = parseHash();
        renderList();
      } else {
        detail.replaceChildren(found.length
          ? el("div", { class: "empty" }, el("p", { text: `Item ${route.item} is in ${found.length} runs; choose one:` }),
            el("ul", {}, found.map((r) => el("li", {}, el("a", { href: link({ run: r.run, item: r.item_id }), text: runs.get(r.run).name })))))
          : el("p", { class: "empty", text: `This view has no item ${route.item}.` }));
        return;
      }
    }
    if (!route.run || !route.item) {
      // Not "on the left": on a narrow screen the list is above.
      detail.replaceChildren(el("p", { class: "empty", text: "Choose a session from the list of sessions." }));
      return;
    }
    const rows = [rowOf(route.run, route.item)];
    if (route.vs) rows.push(rowOf(route.vs, route.item));
    if (rows.some((r) => !r)) {
      detail.replaceChildren(el("p", { class: "empty", text: `This view has no session of run ${route.vs && rows[0] ? route.vs : route.run} on item ${route.item}.` }));
      return;
    }
    if (rows.some((r) => !r.observed)) {
      detail.replaceChildren(el("p", { class: "empty", text: `Item ${route.item} has no log in one of these runs (unobservable).` }));
      return;
    }
    let sessions;
    try {
      sessions = await Promise.all(rows.map(loadSession));
    } catch (err) {
      detail.replaceChildren(el("p", { class: "empty", text: err.message }));
      return;
    }
    const answers = sessions.map((s) => ({ answer: s.answer, name: runs.get(s.run).name }));
    // compareSelect is null with one run: replaceChildren would show that as the text "null".
    detail.replaceChildren(...[
      questionNode(sessions[0], answers),
      compareSelect(sessions[0]),
      el("div", { class: sessions.length > 1 ? "sides two" : "sides" }, sessions.map((s, i) => sideNode(s, i)))].filter(Boolean));
    sessions.forEach((s, i) => step(i, 0, false));
    if (route.call) {
      const n = sessions[0].calls.findIndex((c) => String(c.seq) === route.call);
      if (n >= 0) step(0, n, true);
    }
    detail.scrollTop = 0;
    detail.focus({ preventScroll: true });
    document.title = `${route.item} · AgentHop trajectories`;
  }

  // --- keyboard -----------------------------------------------------------------------------------------

  function moveSession(delta) {
    if (!shown.length) return;
    const at = shown.findIndex((r) => r.run === route.run && r.item_id === route.item);
    const candidates = shown.filter((r) => r.observed);
    if (!candidates.length) return;
    let i = at < 0 ? (delta > 0 ? 0 : shown.length - 1) : at + delta;
    while (i >= 0 && i < shown.length && !shown[i].observed) i += delta;
    if (i < 0 || i >= shown.length) return;
    location.hash = link({ run: shown[i].run, item: shown[i].item_id });
  }

  function bindKeys() {
    help = helpPanel("help-toggle", "help");
    document.addEventListener("keydown", (e) => {
      const t = e.target;
      const typing = isTyping(t);
      if (e.key === "Escape") {
        if (help.isOpen()) help.close(); else if (typing) t.blur();
        return;
      }
      if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
      const s = steppers[active];
      const actions = {
        "?": () => help.toggle(),
        "/": () => $("f-item").focus(),
        j: () => s && step(active, s.at + 1, true),
        k: () => s && step(active, s.at - 1, true),
        g: () => s && step(active, 0, true),
        "]": () => moveSession(1),
        "[": () => moveSession(-1),
      };
      if (actions[e.key]) { e.preventDefault(); actions[e.key](); }
    });
  }

  const observed = INDEX.rows.filter((r) => r.observed).length;
  $("summary").textContent = `${INDEX.runs.length} run${INDEX.runs.length === 1 ? "" : "s"} · ${observed} sessions over `
    + `${new Set(INDEX.rows.map((r) => r.item_id)).size} items · corpus ${INDEX.corpus.corpus_id || "unknown"}`;
  setupFilters();
  bindKeys();
  window.addEventListener("hashchange", renderDetail);
  renderDetail();
}());
