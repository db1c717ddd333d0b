/* The course's search scorer, given to Sphinx's html_search_scorer hook (jaxcourse.published.searchsummaries).
 *
 * Sphinx weighs a word in a page's title like a word in any of its section headings, so the lesson
 * about `jit` ranked below two lessons that have a section about it. Here a page whose own title holds a
 * word of the query comes first (the shorter the title, the more it is about the word: Sphinx weighs
 * its own title matches so), then a page whose objectives ("What you will be able to do") hold it, and
 * a lesson before another page with the same score. The weights of Sphinx's other matches are Sphinx's
 * defaults.
 */
var Scorer = {
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,

  // Added to a whole-page result for each query word in the page's title, then in its objectives.
  pageTitle: 40,
  objectives: 10,
  lesson: 1,

  queryWords: () =>
    (new URLSearchParams(window.location.search).get("q") || "")
      .toLowerCase()
      .split(/[^\p{Letter}\p{Number}_]+/u)
      .filter((word) => word.length > 1),

  holds: (text, word) => {
    const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return new RegExp(`(^|[^\\p{Letter}\\p{Number}_])${escaped}`, "u").test(text.toLowerCase());
  },

  score: (result) => {
    const [docname, title, anchor, , score] = result;
    if (anchor) return score; // a section of a page: Sphinx's score
    const page = (window.COURSE_SEARCH || {})[docname] || {};
    let bonus = 0;
    for (const word of Scorer.queryWords()) {
      if (Scorer.holds(title || "", word)) bonus += Scorer.pageTitle * (1 + word.length / title.length);
      else if (Scorer.holds(page.objectives || "", word)) bonus += Scorer.objectives;
    }
    if (docname.startsWith("lessons/")) bonus += Scorer.lesson;
    return score + bonus;
  },
};
