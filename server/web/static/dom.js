// AgentHop's pages share these helpers (play, the trajectory viewer). A classic script, not a module: the
// viewer inlines it so that it opens from file://, where module scripts cannot load.
// Text from the server, logs or papers is only ever inserted with textContent (el's "text" and children).
"use strict";

window.AgentHopDOM = (function () {
  const byId = (id) => document.getElementById(id);

  // el("a", {href, class, text, onclick}, ...children): an element; null/false attributes and children are left out.
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

  // Whether a key press belongs to a text field (page shortcuts then stay out of the way).
  function isTyping(target) {
    return target instanceof HTMLElement
      && (target.matches("input:not([type=radio]):not([type=checkbox]), textarea, select") || target.isContentEditable);
  }

  // The keyboard help panel: the toggle button shows and hides it; returns toggle(show?).
  function helpPanel(toggleId, panelId) {
    const toggle = byId(toggleId);
    const panel = byId(panelId);
    function set(show) {
      panel.hidden = show === undefined ? !panel.hidden : !show;
      toggle.setAttribute("aria-expanded", String(!panel.hidden));
    }
    toggle.addEventListener("click", () => set());
    return { toggle: set, isOpen: () => !panel.hidden, close() { set(false); toggle.focus(); } };
  }

  function plural(n, word, many) { return `${n.toLocaleString("en")} ${n === 1 ? word : (many || `${word}s`)}`; }

  function shortId(pid, n = 14) { return pid.length > n ? `${pid.slice(0, n - 2)}…` : pid; }

  return { byId, el, isTyping, helpPanel, plural, shortId };
}());
