// Run by an exercise page's head (microgpt's, "Build it yourself") as a
// classic script, bundled with what it imports
// (site_src/hooks/python_prestart.py): the exercise's first Python
// worker starts booting before the page is parsed, instead of after the
// theme's and the page's scripts (about half a second later). The exercise
// widget takes this runner over (runner.js claimRunner); a page reached by
// instant navigation does without. The theme's search worker, and the page's
// other work that can wait, waits until that Python is ready (python_first.js).

import { exerciseFiles, startEarly } from "./runner.js";
import { searchAfterPython } from "./later_search.js";
import { pythonFirst } from "./python_first.js";

// An exercise of functions names its one file on the script tag (the hook copies
// it from the widget's data-exercise); microgpt's exercise names none.
const script = document.currentScript;
const exercise = script && script.dataset.exercise;
searchAfterPython(pythonFirst(startEarly(exercise ? exerciseFiles(exercise) : null).ready));
