// Entry point of the exercise's code editor. site_src/hooks/editor_bundle.py
// bundles this file and CodeMirror 6 (from node_modules) with esbuild into one
// ES module, site/vendor/codemirror/editor.js; the page imports that bundle.
// This file itself is never served.

import { EditorView, basicSetup } from "codemirror";
import { EditorState } from "@codemirror/state";
import { keymap } from "@codemirror/view";
import { indentWithTab } from "@codemirror/commands";
import { indentUnit, syntaxHighlighting } from "@codemirror/language";
import { classHighlighter } from "@lezer/highlight";
import { python } from "@codemirror/lang-python";

// Make an editor inside `parent`. Tab indents; Esc then Tab moves the focus on
// (CodeMirror's tab-focus escape), so keyboard users are never trapped.
export function createEditor({ parent, doc = "", label = "Code", describedBy = "", onChange = null }) {
  const attributes = { "aria-label": label };
  if (describedBy) attributes["aria-describedby"] = describedBy;
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        basicSetup,
        keymap.of([indentWithTab]),
        python(),
        indentUnit.of("    "),
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
