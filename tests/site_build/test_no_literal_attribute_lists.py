"""An attribute list ({ #id }) that Markdown did not apply is printed as text: no page may show one."""

import re

LITERAL = re.compile(r"\{:?\s*#[\w-]+\s*\}")


def test_no_page_prints_an_attribute_list(built_site):
    shown = {}
    for page in built_site.rglob("*.html"):
        text = re.sub(r"<(script|style|pre|code)\b.*?</\1>", "", page.read_text(encoding="utf-8"), flags=re.S)
        found = LITERAL.findall(re.sub(r"<[^>]+>", "", text))
        if found:
            shown[str(page.relative_to(built_site))] = found[:3]
    assert not shown, shown
