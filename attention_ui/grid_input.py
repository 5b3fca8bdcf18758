"""The app's editable grids in the browser: a click selects the clicked cell, and the keys typed go into it.

Streamlit's data editor takes a new cell (a click, Enter, Tab, an arrow, Space on a tick box) only once it has
redrawn itself after a pointer move over it. A click that comes with its move, or a key while the pointer rests
beside the grid (a keyboard user who tabbed into it), is ignored. ``GRID_INPUT_JS`` shows the grid such a move
first. It is part of every page's script (``controls.PAGE_STYLE``'s element), and works on the grids whose keys
start with ``HAND_GRID_KEY`` (Work it by hand's answers and inputs) or ``MASK_GRID_KEY`` (the Masking page's editor).
On Work it by hand's grids Tab at a row's last number also goes on to the next row's first, as on a form.
"""

from __future__ import annotations

HAND_GRID_KEY = "hand-edit-"
"""The start of Work it by hand's grids' widget keys (``hand.grid_editor``): grids of text cells."""
MASK_GRID_KEY = "mask_editor_"
"""The start of the Masking page's mask editor's widget key: a grid of tick boxes."""
RUN_QUIET_MS = 250
"""Enter or Tab in a cell's editor waits while the page's script runs and until it has been idle this long: kept while
a run went on, or just after it ended, the number was sometimes dropped on a busy machine."""
GRID_ROW_PX = 35
"""The height of a row of Streamlit's data editor, and of its header row."""
HOLD_NOTE_MS = 400
"""A number held that long (``RUN_QUIET_MS``: the page is still running) gets a line under its editor saying it waits:
on a busy server the editor stayed open a second or two without a word."""
HOLD_NOTE = "Your number goes in as soon as the page has finished updating…"
"""The line under a held cell's editor (fixed text)."""
COMMIT_AFTER_MS = 50
"""Enter or Tab in a cell's editor waits until this long after the editor opened or was typed into: pressed sooner,
the editor closed before it had taken in what it showed, and the cell came back empty."""

GRID_INPUT_JS = """<script>
if (!window.gridInput) {
  window.gridInput = true;
  // The app's editable grids: Work it by hand's (``hand.grid_editor``, text cells) and the Masking page's mask editor
  // (tick boxes). A text cell's editor opens outside its grid, in the page's portal.
  const TYPED = "[class*='st-key-HAND_GRID_KEY']", TICKED = "[class*='st-key-MASK_GRID_KEY']";
  const GRID = [TYPED, TICKED].map((key) => `${key} [data-testid='stDataFrame']`).join(", ");
  const typed = (grid) => !!grid?.closest(TYPED);  // a grid of text cells
  const gridOf = (element) => (element instanceof Element ? element.closest(GRID) : null);
  const inEditor = (element) => element instanceof Element && !!element.closest(".gdg-clip-region");
  const textField = (element) => element instanceof Element && element.matches("textarea, input, [contenteditable]");
  let pointer = null, keyboardGrid = null;  // where the pointer is; the grid whose cell editor is open
  let settling = null;  // a key just opened or closed a cell's editor: {since, done} (``settle``)
  window.addEventListener("pointermove", (event) => {
    if (event.isTrusted) pointer = [event.clientX, event.clientY];
  }, {capture: true, passive: true});
  let selected = null;  // the grid cell selected last: {grid, col, row} (column 0 holds the rows' names)
  // The grid draws and focuses the cell that ``wrapKeys`` select only with its next run: till then it focuses the
  // cell they left (``drawnBefore``, its element's id), which is not the one selected
  let drawnBefore = null;
  let runsEnded = 0, runEnd = 0;  // the page's script runs ended since this script started; when the last did
  const app = document.querySelector("[data-testid='stApp']");
  const running = () => !!app && app.getAttribute("data-test-script-state") !== "notRunning";
  if (app) new MutationObserver(() => {
    if (running()) return;
    [runsEnded, runEnd] = [runsEnded + 1, performance.now()];
  }).observe(app, {attributes: true, attributeFilter: ["data-test-script-state"]});
  document.addEventListener("focusin", (event) => {
    const grid = gridOf(event.target);
    if (grid || !inEditor(event.target)) keyboardGrid = grid;
    const at = grid && /^glide-cell-([0-9]+)-([0-9]+)$/.exec(event.target.id || "");
    if (at && event.target.id !== drawnBefore) [selected, drawnBefore] = [{grid, col: +at[1], row: +at[2]}, null];
  }, true);
  // the grid a key pressed now goes to (its own, or the one whose cell editor has it), or null
  const keyGrid = () => {
    const active = document.activeElement, grid = gridOf(active) || (inEditor(active) ? keyboardGrid : null);
    return grid?.isConnected ? grid : null;
  };

  // Streamlit's grid takes a new cell (a click, Enter, Tab, an arrow) only while it holds that the pointer is over
  // it, which it learns from a pointer move, a moment after the move (a redraw). A click that came with its move (a
  // quick hand, or a busy page just after Check) kept the cell selected before, and the digits typed next went into
  // that one; a keyboard with the pointer resting beside the grid could not move from cell to cell. So before a
  // click on a grid, or a key in it, the grid is shown a move over it, and Streamlit takes it in before the click
  // or key: a change made while a click or key is handled is drawn before the page goes on (window.event is what
  // tells which event is being handled).
  const overIt = (target, x, y, cause) => {
    const own = Object.getOwnPropertyDescriptor(window, "event");
    const move = new PointerEvent("pointermove", {bubbles: true, cancelable: true, composed: true, clientX: x,
                                                  clientY: y, pointerId: 1, pointerType: "mouse", isPrimary: true});
    if (!own || !own.configurable) { target.dispatchEvent(move); return; }
    Object.defineProperty(window, "event", {get: () => cause, configurable: true});
    try { target.dispatchEvent(move); } finally { Object.defineProperty(window, "event", own); }
  };
  window.addEventListener("pointerdown", (event) => {
    if (!event.isTrusted) return;
    [settling, drawnBefore] = [null, null];  // (the keys typed from now on are for what was clicked)
    if (gridOf(event.target) && event.target.matches("canvas, .dvn-scroller"))
      overIt(event.target, event.clientX, event.clientY, event);
  }, true);
  // A click on a tick box ticks it and selects nothing: the focus was left on no element, and the arrows and Space
  // that followed scrolled the page instead of moving in the grid. The cell is then selected as by a click on its
  // row's top edge, above the box.
  window.addEventListener("click", (event) => {
    const grid = gridOf(event.target);
    if (!event.isTrusted || !grid || typed(grid) || !event.target.matches("canvas, .dvn-scroller")) return;
    setTimeout(() => {
      const canvas = grid.querySelector("canvas");
      if (gridOf(document.activeElement) === grid || !canvas?.isConnected) return;
      const top = canvas.getBoundingClientRect().top + GRID_ROW_PX;  // (under the header row)
      const row = Math.floor((event.clientY - top) / GRID_ROW_PX);
      if (row < 0) return;
      const at = {bubbles: true, cancelable: true, composed: true, clientX: event.clientX,
                  clientY: top + row * GRID_ROW_PX + 4, pointerId: 1, pointerType: "mouse", isPrimary: true,
                  button: 0, buttons: 1};
      canvas.dispatchEvent(new PointerEvent("pointermove", at));
      canvas.dispatchEvent(new PointerEvent("pointerdown", at));
      canvas.dispatchEvent(new MouseEvent("mousedown", at));
      canvas.dispatchEvent(new PointerEvent("pointerup", {...at, buttons: 0}));
      canvas.dispatchEvent(new MouseEvent("mouseup", {...at, buttons: 0}));
      canvas.dispatchEvent(new MouseEvent("click", {...at, buttons: 0}));
    }, 0);
  }, true);
  const beforeKey = (grid, event) => {
    const target = grid.querySelector(".dvn-scroller");
    if (!target) return;
    const box = target.getBoundingClientRect();
    const over = pointer && pointer[0] > box.left && pointer[0] < box.right && pointer[1] > box.top
      && pointer[1] < box.bottom;
    // (else the row labels' column, halfway down: no cell of a number is hovered)
    const [x, y] = over ? pointer : [box.left + 4, box.top + box.height / 2];
    overIt(target, x, y, event);
  };

  // Tab at a row's last cell stayed there, and the next number typed replaced the one just typed. It goes on to the
  // next row's first number, as on a form: the keys that move there follow the Tab (``waiting``).
  const size = (grid) => {  // [the last column, the rows] of a grid, or null
    const table = grid?.querySelector("table[aria-colcount]");
    return table && [+table.getAttribute("aria-colcount") - 1, +table.getAttribute("aria-rowcount") - 1];
  };
  const commits = (key) => key.key === "Tab" || (key.key === "Enter" && !key.shiftKey);  // keys that keep a cell
  const leaves = (cell, key) => {  // whether ``key`` selects another cell than ``cell``
    const [last, rows] = size(cell.grid) || [0, 0];
    if (key.key === "Tab") return key.shiftKey ? cell.col > 0 : cell.col < last;
    return key.key === "Enter" && !key.shiftKey && cell.row + 1 < rows;
  };
  const wrapKeys = (grid, key) => {
    const cell = selected?.grid === grid ? selected : null;
    const shape = key.key === "Tab" && cell ? size(grid) : null;  // [its last column, its rows]
    if (!shape || key.ctrlKey || key.altKey || key.metaKey || !typed(grid)) return [];
    const [last, rows] = shape;
    const [keys, to] = !key.shiftKey && cell.col === last && cell.row + 1 < rows
      ? [["ArrowDown", "Home", "ArrowRight"], {grid, col: 1, row: cell.row + 1}] : [[], null];
    return keys.map((name, at) => ({key: name, code: name, shiftKey: false, ctrlKey: false, altKey: false,
                                    metaKey: false, selects: at === keys.length - 1 ? to : null}));
  };

  // A digit typed on a cell opens the cell's editor with it, and Enter or Tab closes it again; both take a moment
  // (more the first time on a page). The keys typed meanwhile went to the grid, and each opened the editor afresh
  // ("34" came out "4"; "1" and Enter left the cell empty), or to no cell at all. They wait, and go on in their order.
  const waiting = [];
  let delivering = false;
  const printable = (key) => key.key.length === 1 && !key.ctrlKey && !key.metaKey && !key.altKey;
  const settle = (key) => {  // what ``key``, about to be handled, does to a cell's editor
    const since = performance.now();
    if (inEditor(document.activeElement)) {
      // Tab or Enter closes the editor on its cell and, once the run the new number starts has ended, selects the
      // next cell: a digit typed in between went into the cell just left, in place of its number, and the keys that
      // go on to the next row (``wrapKeys``) were undone by that run
      const from = selected?.grid === keyboardGrid ? selected : null, runs = runsEnded;
      const after = !from || !commits(key) ? null : leaves(from, key) ? "moved" : "ran";
      const settled = () => after === "moved" ? selected.col !== from.col || selected.row !== from.row
        : after !== "ran" || runsEnded > runs && performance.now() - runEnd > 150;
      if (key.key === "Tab" || key.key === "Escape" || (key.key === "Enter" && !key.shiftKey))
        settling = {since, done: () => !!gridOf(document.activeElement) && settled()};
    } else if (typed(keyGrid()) && (printable(key) || key.key === "Enter")) {  // (a tick box opens no editor)
      const mine = settling = {since, done: () => inEditor(document.activeElement)};
      // (the grid cancels a key that opens the editor: a key on no cell, or on a row's label, is let go at once)
      setTimeout(() => { if (!key.defaultPrevented && settling === mine) settling = null; }, 0);
    }
  };
  // A double-click on a cell opens its editor, but after an earlier edit the focus stayed on the grid: the first key
  // typed then opened a second editor over the first, and Enter closed it without keeping the number (two of four
  // numbers typed that way came back empty). Such a key goes into the open editor instead.
  const strayEditor = () => {
    const editor = document.querySelector(".gdg-clip-region textarea, .gdg-clip-region input");
    const active = document.activeElement;
    return editor?.isConnected && !inEditor(active) && typed(gridOf(active)) ? editor : null;
  };
  const unsettled = () => !!settling && performance.now() - settling.since < 1500 && !settling.done();
  // Enter or Tab a moment after a cell's editor opened, or after a key typed into it (quick keys, a paste), closed
  // the editor before it had taken in what it showed: the cell came back empty ("3/4" typed and Enter at once). Such
  // a key waits until the editor has drawn (``COMMIT_AFTER_MS``).
  let editorChanged = -Infinity;  // when a cell's editor last opened or was typed into
  for (const type of ["focusin", "input"])
    document.addEventListener(type, (event) => {
      if (inEditor(event.target) && textField(event.target)) editorChanged = performance.now();
    }, true);
  const unsaved = (key) => commits(key) && inEditor(document.activeElement)
    && performance.now() - editorChanged < COMMIT_AFTER_MS;
  // A number kept (Enter or Tab in a cell's editor) while the page's script ran, or just after a run ended, was
  // sometimes dropped by the grid on a busy machine: the cell came back empty and the next number's run did not carry
  // it. Such a key waits until the page has been idle a moment (``RUN_QUIET_MS``); a click meanwhile waits behind it.
  const busy = (key) => commits(key) && inEditor(document.activeElement) && typed(keyboardGrid)
    && (running() || performance.now() - runEnd < RUN_QUIET_MS);
  const holdNote = () => {  // a line under the open editor while its number waits for the page (``busy``)
    const editor = document.querySelector(".gdg-clip-region")?.getBoundingClientRect();
    if (!editor) return null;
    const note = document.createElement("div");
    note.setAttribute("role", "status");
    note.className = "grid-hold-note";
    note.textContent = "HOLD_NOTE";
    Object.assign(note.style, {position: "fixed", left: `${editor.left}px`, top: `${editor.bottom + 4}px`,
                               zIndex: 100000, padding: "2px 8px", borderRadius: "4px", fontSize: "0.85rem",
                               background: "#fff4cc", color: "#31333f", border: "1px solid #e0c060",
                               pointerEvents: "none"});
    document.body.appendChild(note);
    return note;
  };
  const later = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));
  const typeIn = (field, text) => {
    if (document.execCommand("insertText", false, text)) return;
    const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(field), "value")?.set;
    if (!setter || field.selectionStart == null) return;
    setter.call(field, field.value.slice(0, field.selectionStart) + text + field.value.slice(field.selectionEnd));
    field.dispatchEvent(new Event("input", {bubbles: true}));
  };
  const deliver = async () => {
    if (delivering) return;
    delivering = true;
    try {
      while (waiting.length) {
        const since = performance.now();
        let note = null;
        while (unsettled() || unsaved(waiting[0]) || (busy(waiting[0]) && performance.now() - since < 10000)) {
          if (!note && busy(waiting[0]) && performance.now() - since > HOLD_NOTE_MS) note = holdNote();
          await later(20);
        }
        note?.remove();
        settling = null;
        if (waiting[0].pointer) {
          await replay(waiting.shift());
          continue;
        }
        const key = waiting.shift(), stray = strayEditor();
        if (stray && (printable(key) || key.key === "Backspace")) stray.focus();
        const active = document.activeElement;
        if (textField(active) && printable(key)) {
          typeIn(active, key.key);
        } else if (textField(active) && key.key === "Backspace") {
          document.execCommand("delete");
        } else {
          const event = new KeyboardEvent("keydown", {...key, bubbles: true, cancelable: true, composed: true});
          const grid = keyGrid();
          if (grid) beforeKey(grid, event);
          await later();  // (Streamlit has taken in the move, and the editor has drawn what was typed into it)
          const follow = wrapKeys(keyGrid(), event);
          if (keyGrid()) settle(event);
          (document.activeElement || document.body).dispatchEvent(event);
          if (key.selects) [selected, drawnBefore] = [key.selects, gridOf(active) === key.selects.grid && active.id];
          waiting.unshift(...follow);
        }
        await later();
      }
    } finally {
      delivering = false;
    }
  };
  // a click that waits behind a key: its events, replayed in their order once the keys before it have gone
  const POINTER = ["pointerdown", "mousedown", "pointerup", "mouseup", "click", "dblclick"];
  const replay = async ({pointer: type, at, x, y, init}) => {
    const target = document.elementFromPoint(x, y);
    if (!target) return;
    if (type === "pointerdown" && gridOf(target)) overIt(target, x, y, null);
    const Kind = type.startsWith("pointer") ? PointerEvent : MouseEvent;
    target.dispatchEvent(new Kind(type, {...init, bubbles: true, cancelable: true, composed: true}));
    if (type === "dblclick" && typed(gridOf(target))) {
      const mine = settling = {since: performance.now(), done: () => inEditor(document.activeElement)};
      setTimeout(() => { if (settling === mine && !inEditor(document.activeElement)) settling = null; }, 1000);
    }
    const next = waiting[0];
    if (next?.pointer) await later(Math.min(Math.max(next.at - at, 0), 200));
  };
  for (const type of POINTER)
    window.addEventListener(type, (event) => {
      if (!event.isTrusted || !(waiting.length || delivering) || !event.target?.closest?.("[data-testid='stApp']"))
        return;
      event.preventDefault();
      event.stopImmediatePropagation();
      const {clientX, clientY, screenX, screenY, button, buttons, detail, shiftKey, ctrlKey, altKey, metaKey} = event;
      const init = {clientX, clientY, screenX, screenY, button, buttons, detail, shiftKey, ctrlKey, altKey, metaKey,
                    view: window};
      if (event instanceof PointerEvent)
        Object.assign(init, {pointerId: event.pointerId, pointerType: event.pointerType, isPrimary: event.isPrimary});
      waiting.push({pointer: type, at: performance.now(), x: clientX, y: clientY, init});
      deliver();
    }, true);
  window.addEventListener("keydown", (event) => {
    if (!event.isTrusted || event.isComposing) return;
    if (waiting.length || delivering || unsettled() || unsaved(event) || busy(event)) {
      event.preventDefault();
      event.stopImmediatePropagation();
      const {key, code, shiftKey, ctrlKey, altKey, metaKey} = event;
      waiting.push({key, code, shiftKey, ctrlKey, altKey, metaKey});
      deliver();
      return;
    }
    const stray = strayEditor();
    if (stray && (printable(event) || event.key === "Backspace")) {
      event.preventDefault();
      event.stopImmediatePropagation();
      stray.focus();
      if (printable(event)) typeIn(stray, event.key);
      else document.execCommand("delete");
      return;
    }
    const grid = keyGrid();
    if (!grid) return;
    beforeKey(grid, event);
    settle(event);
    const follow = wrapKeys(grid, event);
    if (follow.length) {
      waiting.push(...follow);
      setTimeout(deliver, 0);  // (after the grid has taken the Tab itself)
    }
  }, true);
}
</script>""".replace("HAND_GRID_KEY", HAND_GRID_KEY).replace("MASK_GRID_KEY", MASK_GRID_KEY).replace(
    "GRID_ROW_PX", str(GRID_ROW_PX)).replace("COMMIT_AFTER_MS", str(COMMIT_AFTER_MS)).replace(
    "RUN_QUIET_MS", str(RUN_QUIET_MS)).replace("HOLD_NOTE_MS", str(HOLD_NOTE_MS)).replace("HOLD_NOTE", HOLD_NOTE)
"""The page script that makes a click on an editable grid select the clicked cell and the keys typed go into it,
first time (fixed code, no user text). Drawn out of the page's flow with the page's style."""
