/* The course's own script: each collapse button says what it opens, and furo's drawer buttons work
 * from the keyboard.
 *
 * sphinx-togglebutton gives every button it adds the same accessible name, so a screen reader hears
 * "Toggle hidden content" eight times a page and cannot tell a hint from a solution. Here each button is
 * named after its box: "Show hint 1: Practice", "Show solution: Foundation", "Show the recorded run",
 * "Show “Compare your reasoning”". The verb follows the state ("Hide ..." once open), as the visible
 * "Show"/"Hide" beside the button does (conf.py's togglebutton_hint), and no two buttons of a page share a
 * name. tests/test_browser.py checks both.
 *
 * furo opens its drawers (the navigation, and the page's contents on narrower screens) with <label>
 * icons for hidden checkboxes, which a keyboard cannot reach. Each icon becomes a button here: it takes
 * focus, Enter or Space opens or closes its drawer, Escape closes it, and it says whether the drawer is
 * open.
 */
"use strict";

(() => {
  const levelOf = (text) => {
    const match = /\(([^()]+)\)\s*$/.exec(text);
    return match ? match[1].trim() : "";
  };

  const titleOf = (box) => {
    const title = box.querySelector(":scope > .admonition-title");
    return title ? title.textContent.replace(/\s+/g, " ").trim() : "";
  };

  const describe = (box, counters) => {
    const title = titleOf(box);
    if (box.classList.contains("recorded-run")) return "the recorded run";
    if (box.classList.contains("solution")) {
      const level = levelOf(title);
      return level ? `solution: ${level}` : "solution";
    }
    if (box.classList.contains("hint")) {
      counters.hint += 1;
      const exercise = box.closest(".exercise");
      const level = exercise ? levelOf(titleOf(exercise)) : "";
      return `hint ${counters.hint}` + (level ? `: ${level}` : "");
    }
    return title ? `“${title}”` : "hidden content";
  };

  const label = (button) => {
    const open = button.getAttribute("aria-expanded") === "true";
    button.setAttribute("aria-label", `${open ? "Hide" : "Show"} ${button.dataset.courseOpens}`);
  };

  const nameToggles = () => {
    const counters = { hint: 0 };
    const seen = new Map();
    for (const button of document.querySelectorAll("button.toggle-button")) {
      if (button.dataset.courseOpens) continue;
      const box = document.getElementById(button.dataset.target) || button.closest(".admonition");
      let opens = box ? describe(box, counters) : "hidden content";
      const count = (seen.get(opens) || 0) + 1;
      seen.set(opens, count);
      if (count > 1) opens = `${opens} (${count})`;
      button.dataset.courseOpens = opens;
      label(button);
      new MutationObserver(() => label(button)).observe(button, {
        attributes: true,
        attributeFilter: ["aria-expanded"],
      });
    }
  };

  const DRAWERS = {
    __navigation: ["site navigation", ".sidebar-drawer"],
    __toc: ["contents of this page", ".toc-drawer"],
  };

  const drawerButtons = () => {
    for (const [id, [what, drawerSelector]] of Object.entries(DRAWERS)) {
      const box = document.getElementById(id);
      const drawer = document.querySelector(drawerSelector);
      if (!box || !drawer) continue;
      const buttons = [];
      let opener = null;
      for (const icon of document.querySelectorAll(`label[for="${id}"]:not(.overlay)`)) {
        // A real button in the label's place, with its classes (furo's rules show and place it) and icon.
        const button = document.createElement("button");
        button.type = "button";
        button.className = `${icon.className} course-drawer-button`;
        button.setAttribute("aria-label", `Open or close the ${what}`);
        button.append(...icon.childNodes);
        button.addEventListener("click", () => {
          box.checked = !box.checked;
          box.dispatchEvent(new Event("change"));
          if (box.checked) {
            // Into the drawer it opened, as the drawer is drawn over the page.
            opener = button;
            const first = drawer.querySelector("input, a[href], button");
            window.requestAnimationFrame(() => first && first.focus());
          }
        });
        icon.replaceWith(button);
        buttons.push(button);
      }
      const sync = () => buttons.forEach((button) => button.setAttribute("aria-expanded", String(box.checked)));
      box.addEventListener("change", sync);
      // The overlay (a label furo keeps) closes the drawer with a click.
      document.addEventListener("click", () => window.setTimeout(sync, 0));
      document.addEventListener("keydown", (event) => {
        if (event.key === "Escape" && box.checked) {
          box.checked = false;
          sync();
          if (opener) opener.focus();
        }
      });
      sync();
    }
  };

  // sphinx-togglebutton adds its buttons when the document is parsed; this runs after it.
  const start = () => {
    drawerButtons();
    window.setTimeout(nameToggles, 0);
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
