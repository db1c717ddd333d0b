/* Under each search result, a snippet of the page's own prose (jaxcourse.published.searchsummaries).
 *
 * The build writes every page's objectives and opening prose into window.COURSE_SEARCH, above this
 * script, in the one file the search page loads. Sphinx's search lists the results; for each result it
 * adds, this puts a snippet under it: the sentence around the first word of the query found in the prose,
 * or the page's first lines, with the query's words marked. No page is downloaded to make it.
 */
(() => {
  "use strict";
  const WIDTH = 240;

  const words = () =>
    (new URLSearchParams(window.location.search).get("q") || "")
      .toLowerCase()
      .split(/[^\p{Letter}\p{Number}_]+/u)
      .filter((word) => word.length > 1);

  const docnameOf = (link) => {
    const path = (link.getAttribute("href") || "").split("#")[0];
    return path.replace(/\.html$/, "").replace(/\/$/, "/index");
  };

  const excerpt = (text, found) => {
    if (found < 0 || text.length <= WIDTH) return text.slice(0, WIDTH).trim() + (text.length > WIDTH ? " …" : "");
    // Start at the beginning of the sentence that holds the word, if it is near enough.
    let start = Math.max(0, found - WIDTH / 3);
    const sentence = text.lastIndexOf(". ", found);
    if (sentence >= start - WIDTH / 3 && sentence >= 0) start = sentence + 2;
    else if (start > 0) start = text.indexOf(" ", start) + 1;
    const end = Math.min(text.length, start + WIDTH);
    return (start > 0 ? "… " : "") + text.slice(start, end).trim() + (end < text.length ? " …" : "");
  };

  const mark = (paragraph, text, query) => {
    const pattern = query.length
      ? new RegExp(`(${query.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})`, "giu")
      : null;
    const pieces = pattern ? text.split(pattern) : [text];
    pieces.forEach((piece, index) => {
      if (index % 2 === 1) {
        const span = paragraph.appendChild(document.createElement("span"));
        span.className = "highlighted";
        span.textContent = piece;
      } else if (piece) paragraph.appendChild(document.createTextNode(piece));
    });
  };

  const addSnippet = (item) => {
    const link = item.querySelector("a");
    if (!link || item.querySelector("p.context")) return;
    const page = (window.COURSE_SEARCH || {})[docnameOf(link)];
    if (!page) return;
    const query = words();
    const text = [page.objectives, page.prose].filter(Boolean).join(" ");
    const lower = text.toLowerCase();
    const positions = query.map((word) => lower.indexOf(word)).filter((at) => at >= 0);
    const snippet = excerpt(text, positions.length ? Math.min(...positions) : -1);
    if (!snippet) return;
    const paragraph = document.createElement("p");
    paragraph.className = "context";
    mark(paragraph, snippet, query);
    item.appendChild(paragraph);
  };

  const watch = () => {
    const results = document.getElementById("search-results");
    if (!results) return;
    results.querySelectorAll("ul.search > li").forEach(addSnippet);
    new MutationObserver((changes) => {
      for (const change of changes)
        for (const node of change.addedNodes) {
          if (node.nodeName === "LI") addSnippet(node);
          else if (node.querySelectorAll) node.querySelectorAll("ul.search > li").forEach(addSnippet);
        }
    }).observe(results, { childList: true, subtree: true });
  };

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watch);
  else watch();
})();
