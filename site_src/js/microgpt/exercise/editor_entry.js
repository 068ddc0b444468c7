// Entry point of the exercise's code editor. site_src/hooks/editor_bundle.py
// bundles this file and CodeMirror 6 (from node_modules) with esbuild into one
// classic script, site/vendor/codemirror/editor.js, which leaves createEditor
// on the global object (EDITOR_GLOBAL below; microgpt/exercise.js loads it).
// A classic script because Chrome keeps the service worker's precached
// scripts compiled in its code cache, and 460 kB of CodeMirror were otherwise
// parsed and compiled again on every visit (bench/RESULTS.md).
// This file itself is never served.

import { EditorView, basicSetup } from "codemirror";
import { EditorState, Prec } from "@codemirror/state";
import { keymap } from "@codemirror/view";
import { cursorLineEnd, cursorLineStart, selectLineEnd, selectLineStart } from "@codemirror/commands";
import { indentUnit, syntaxHighlighting } from "@codemirror/language";
import { classHighlighter } from "@lezer/highlight";
import { python } from "@codemirror/lang-python";

// Make an editor inside `parent`. Tab is left to the browser, so it moves the
// focus on and a keyboard user walking the page never types an indent into
// the code; Enter indents new lines, and Ctrl/Cmd+] and Ctrl/Cmd+[ (in
// basicSetup's default keymap) indent a line more or less. Lines never wrap:
// in Python a wrapped line would start at column 0 and look unindented, so a
// long line scrolls sideways, and Home and End go to the start and end of the
// line as Python reads it.
function createEditor({ parent, doc = "", label = "Code", describedBy = "", onChange = null }) {
  // tabindex: axe counts the scrolling box as reachable only with focusable content inside.
  const attributes = { "aria-label": label, tabindex: "0" };
  if (describedBy) attributes["aria-describedby"] = describedBy;
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        basicSetup,
        python(),
        indentUnit.of("    "),
        Prec.high(
          keymap.of([
            { key: "Home", run: cursorLineStart, shift: selectLineStart, preventDefault: true },
            { key: "End", run: cursorLineEnd, shift: selectLineEnd, preventDefault: true },
          ]),
        ),
        syntaxHighlighting(classHighlighter),
        EditorView.contentAttributes.of(attributes),
        EditorView.updateListener.of((update) => {
          if (update.docChanged && onChange) onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    getValue: () => view.state.doc.toString(),
    setValue: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}

globalThis.mhaCodeMirror = { createEditor }; // EDITOR_GLOBAL in microgpt/exercise.js
