"""Text: families of the bundled backend tasks."""

from __future__ import annotations

import random
import string
from typing import Any

from sweetrl_gym.tasks.family import Fact, Family

_STOP = {
    "none": (),
    "articles": ("a", "an", "the"),
    "common": ("a", "an", "the", "and", "or", "of", "in", "on", "to", "for", "with"),
}


def _set_literal(words: tuple[str, ...]) -> str:
    """Return a set display with a stable order (a set's repr depends on the hash seed)."""
    return "{" + ", ".join(repr(w) for w in sorted(words)) + "}"


_TITLE_WORDS = (
    "The", "Best", "Way", "to", "Learn", "Python", "in", "2024", "A", "Guide", "for", "Beginners",
    "and", "Experts", "of", "an", "Easy", "Recipe", "Don't", "Stop", "It's", "Rock", "&", "Roll",
    "e-mail", "Tips", "with", "Data", "Science", "on", "the", "Road", "Hello,", "World!", "Why",
    "You", "Should", "or", "Travel", "Cheap",
)  # fmt: skip


class TitleSlug(Family):
    name = "title_slug"
    domain = "text"
    function_names = ("slugify", "make_slug", "title_to_slug")
    params = ("title",)
    descriptions = (
        "I need a function that turns a blog post title into a URL slug.",
        "Can you write something that makes a URL-friendly version of an article title?",
        "I'd like a python function to build the slug part of a web address from a page title.",
    )
    facts = (
        Fact(
            "separator",
            "rule",
            options=("-", "_", ".", "+"),
            default="-",
            keywords=("separator", "between", "hyphen", "dash", "underscore", "spaces"),
            answer="Join the words with '{v}'.",
        ),
        Fact(
            "lowercase",
            "case",
            options=(True, False),
            default=True,
            keywords=("lowercase", "case", "capital", "uppercase", "capitalization"),
            answer=lambda v: (
                "Make the whole slug lowercase."
                if v
                else "Keep the letters' original capitalization."
            ),
        ),
        Fact(
            "max_length",
            "threshold",
            options=(None, 20, 30, 40, 50),
            default=None,
            keywords=("long", "length", "maximum", "characters", "limit", "truncate"),
            answer=lambda v: (
                "There is no length limit."
                if v is None
                else f"Cut the slug to at most {v} characters, then drop any trailing separator."
            ),
        ),
        Fact(
            "stop_words",
            "rule",
            options=("none", "articles", "common"),
            default="none",
            keywords=("stop", "articles", "filler", "small", "remove", "skip"),
            answer=lambda v: {
                "none": "Keep every word, even little ones like 'the'.",
                "articles": "Drop the articles 'a', 'an' and 'the' (any case).",
                "common": "Drop the small words a, an, the, and, or, of, in, on, to, for, with "
                "(any case).",
            }[v],
        ),
        Fact(
            "punctuation",
            "rule",
            options=("split", "drop"),
            default="split",
            keywords=("punctuation", "apostrophe", "symbols", "special", "hyphenated"),
            answer=lambda v: (
                "Any punctuation, even an apostrophe inside a word, breaks the word in two."
                if v == "split"
                else "Punctuation is deleted without breaking the word, so don't becomes dont."
            ),
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        sep, stop = v["separator"], _STOP[v["stop_words"]]
        if v["punctuation"] == "split":
            lines = ["import re", 'words = re.findall(r"[A-Za-z0-9]+", title)']
        else:
            lines = ["import re", 'words = [re.sub(r"[^A-Za-z0-9]", "", w) for w in title.split()]',
                     "words = [w for w in words if w]"]  # fmt: skip
        if stop:
            lines.append(f"words = [w for w in words if w.lower() not in {_set_literal(stop)}]")
        lines.append(f"slug = {sep!r}.join(words)" + (".lower()" if v["lowercase"] else ""))
        if v["max_length"] is not None:
            lines.append(f"slug = slug[:{v['max_length']}].rstrip({sep!r})")
        lines.append("return slug")
        return "\n".join(lines)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        titles = [
            " ".join(rng.choice(_TITLE_WORDS) for _ in range(rng.randint(2, 12))) for _ in range(30)
        ]
        titles += [
            "The Art of War", "Don't Panic: A Guide to the Galaxy", "", "  Hello   World  ",
            "Rock & Roll Is Here to Stay",
            "A Tale of Two Cities and the Road to Nowhere in Particular",
            "The Complete Unofficial Guide to Cooking Pasta for Hungry Students on a Budget",
            "Why Every Beginner Should Learn Python Before Touching Any Other Language",
        ]  # fmt: skip
        return [(t,) for t in titles]


class FormatPersonName(Family):
    name = "format_person_name"
    domain = "text"
    function_names = ("format_name", "format_person_name", "display_name")
    params = ("first_name", "last_name", "middle_name")
    descriptions = (
        "I need a function that formats a person's name for display from its parts.",
        "Can you write something that puts together a first, middle and last name nicely?",
        "Write me a python function that builds a clean full name for our contact list.",
    )
    facts = (
        Fact(
            "order",
            "ordering",
            options=("first_last", "last_comma", "last_space"),
            default="first_last",
            keywords=("order", "surname", "comma", "before", "come"),
            answer=lambda v: {
                "first_last": "Put the given names first, then the last name: 'John Smith'.",
                "last_comma": "Put the last name first followed by a comma: 'Smith, John'.",
                "last_space": "Put the last name first with just a space: 'Smith John'.",
            }[v],
        ),
        Fact(
            "middle",
            "rule",
            options=("full", "initial", "initial_nodot", "omit"),
            default="full",
            keywords=("middle",),
            answer=lambda v: {
                "full": "Show the middle name in full.",
                "initial": "Shorten the middle name to its initial with a period, like 'R.'.",
                "initial_nodot": "Shorten the middle name to its initial with no period, like 'R'.",
                "omit": "Leave the middle name out entirely.",
            }[v],
        ),
        Fact(
            "case",
            "case",
            options=("title", "as_given", "upper_last", "lower"),
            default="title",
            keywords=("case", "capitalize", "capital", "uppercase", "capitalization"),
            answer=lambda v: {
                "title": "Capitalize each name part like a title: 'Mary-Jane O'Neil'.",
                "as_given": "Keep the capitalization exactly as typed, only trim spaces.",
                "upper_last": "Write the last name in all caps and title-case the others.",
                "lower": "Write the whole name in lowercase.",
            }[v],
        ),
        Fact(
            "first_initial",
            "rule",
            options=(False, True),
            default=False,
            keywords=("first", "initial", "abbreviate", "shorten", "given"),
            answer=lambda v: (
                "Shorten the first name to its initial with a period, like 'J.'."
                if v
                else "Show the first name in full."
            ),
        ),
        Fact(
            "empty",
            "edge_case",
            options=("", "Unknown", "N/A"),
            default="",
            keywords=("empty", "blank", "missing", "nothing", "both"),
            answer=lambda v: f"If both first and last name are blank, return {v!r}.",
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        case = {
            "title": "first, middle, last = first.title(), middle.title(), last.title()",
            "as_given": "",
            "upper_last": "first, middle, last = first.title(), middle.title(), last.upper()",
            "lower": "first, middle, last = first.lower(), middle.lower(), last.lower()",
        }[v["case"]]
        middle = {
            "full": "",
            "initial": 'middle = middle[:1] + "." if middle else ""',
            "initial_nodot": "middle = middle[:1]",
            "omit": 'middle = ""',
        }[v["middle"]]
        join = {
            "first_last": 'return " ".join(p for p in (given, last) if p)',
            "last_comma": 'return f"{last}, {given}" if last and given else last or given',
            "last_space": 'return " ".join(p for p in (last, given) if p)',
        }[v["order"]]
        lines = [
            "first, middle, last = first_name.strip(), middle_name.strip(), last_name.strip()",
            "if not first and not last:",
            f"    return {v['empty']!r}",
            case,
            'first = first[:1] + "." if first else ""' if v["first_initial"] else "",
            middle,
            'given = " ".join(p for p in (first, middle) if p)',
            join,
        ]
        return "\n".join(line for line in lines if line)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        firsts = ["john", "MARY", "aNNa", "Li", "jean-luc", "  peter ", "Zoe", "o'hara"]
        lasts = ["smith", "O'NEIL", "van dyke", "Nguyen", "mcDonald", "Wei", "lee "]
        middles = ["", "", "ronald", "Ann", "JAMES", "de la", "q"]
        rows = [(rng.choice(firsts), rng.choice(lasts), rng.choice(middles)) for _ in range(24)]
        return [*rows, ("", "", ""), ("  ", "", "ray"), ("Cher", "", ""), ("", "Smith", ""),
                ("", "Smith", "Ann"), ("anna", "BELL", "lee")]  # fmt: skip


class CensorWords(Family):
    name = "censor_words"
    domain = "text"
    function_names = ("censor", "censor_words", "clean_sentence")
    params = ("text", "banned_words")
    descriptions = (
        "I need a function that censors banned words in a sentence.",
        "Can you write something that hides bad words in chat messages? I'll pass the message "
        "and a list of words to hide.",
        "Write a python function to bleep out words from a blocklist in some text.",
    )
    facts = (
        Fact(
            "replacement",
            "rule",
            options=("*", "#", "-", "[censored]", "***"),
            default="*",
            keywords=("replace", "replacement", "asterisk", "symbol", "mask", "star"),
            answer=lambda v: (
                f"Replace every censored letter with '{v}' so the length stays the same."
                if len(v) == 1
                else f"Replace the censored part with the fixed string '{v}'."
            ),
        ),
        Fact(
            "keep",
            "rule",
            options=("none", "first", "first_last"),
            default="none",
            keywords=("first", "letter", "visible", "keep", "hint"),
            answer=lambda v: {
                "none": "Censor the whole banned word, first letter included.",
                "first": "Keep the first letter of a banned word and censor only the rest.",
                "first_last": "Keep the first and last letters of a banned word and censor "
                "only the middle.",
            }[v],
        ),
        Fact(
            "ignore_case",
            "case",
            options=(True, False),
            default=True,
            keywords=("case", "capital", "uppercase", "lowercase", "insensitive"),
            answer=lambda v: (
                "Match banned words regardless of upper or lower case."
                if v
                else "Only censor a word when its case matches the banned list exactly."
            ),
        ),
        Fact(
            "whole_words",
            "rule",
            options=(True, False),
            default=True,
            keywords=("whole", "inside", "substring", "longer", "within"),
            answer=lambda v: (
                "Only censor whole words, not banned words inside longer words."
                if v
                else "Also censor banned words that appear inside longer words."
            ),
        ),
        Fact(
            "output",
            "return_format",
            options=("text", "tuple", "dict"),
            default="text",
            keywords=("return", "count", "tuple", "number", "output"),
            answer={
                "text": "Just return the censored sentence.",
                "tuple": "Return a tuple of the censored sentence and how many matches were "
                "censored.",
                "dict": "Return a dict {'text': censored sentence, 'count': number of matches "
                "censored}.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        rep = v["replacement"]
        head = '""' if v["keep"] == "none" else "w[:1]"
        tail = "w[-1:]" if v["keep"] == "first_last" else '""'
        hide = (
            f"head + {rep!r} * (len(w) - len(head) - len(tail)) + tail"
            if len(rep) == 1
            else f"head + {rep!r} + tail"
        )
        edge = {"text": "text", "tuple": "(text, 0)", "dict": "{'text': text, 'count': 0}"}
        pattern = '"(?:" + alts + ")"'
        if v["whole_words"]:
            pattern = 'r"\\b(?:" + alts + r")\\b"'
        flags = "re.IGNORECASE" if v["ignore_case"] else "0"
        result = {"text": "new", "tuple": "(new, count)", "dict": "{'text': new, 'count': count}"}
        return f"""
        import re
        if not banned_words:
            return {edge[v["output"]]}
        alts = "|".join(re.escape(w) for w in sorted(banned_words, key=len, reverse=True))
        pattern = {pattern}

        def hide(match):
            w = match.group(0)
            head, tail = {head}, {tail}
            return {hide}

        new, count = re.subn(pattern, hide, text, flags={flags})
        return {result[v["output"]]}
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        bad = ["darn", "heck", "dang", "crap", "shoot"]
        tokens = [*bad, *bad, "Darn", "HECK", "darned", "heckler", "crappy", "Shoot!", "dang,",
                  "what", "the", "is", "this", "oh", "well"]  # fmt: skip
        rows = []
        for _ in range(26):
            sentence = " ".join(rng.choice(tokens) for _ in range(rng.randint(3, 10)))
            rows.append((sentence, rng.sample(bad, rng.randint(1, 3))))
        return [
            *rows,
            ("Darn it, what the heck was that?", ["darn", "heck"]),
            ("That darned heckler yelled DANG at me.", ["darn", "heck", "dang"]),
            ("oh shoot, the crappy crap broke", ["crap", "shoot"]),
            ("nothing bad here", ["darn"]),
            ("what the heck", []),
        ]


_CHARSETS = {
    "alnum": ("A-Za-z0-9", "letters and digits only"),
    "alnum_underscore": ("A-Za-z0-9_", "letters, digits and underscores only"),
    "lower_underscore": ("a-z0-9_", "lowercase letters, digits and underscores only"),
    "alnum_punct": ("A-Za-z0-9_.-", "letters, digits, underscores, dots and dashes only"),
}


class ValidateUsername(Family):
    name = "validate_username"
    domain = "text"
    function_names = ("validate_username", "is_valid_username", "check_username")
    params = ("username",)
    descriptions = (
        "I need a function that checks whether a username is acceptable for my site.",
        "Can you write a username validator for our sign-up form?",
        "Write me a python function that tells me if a new user's chosen username is okay.",
    )
    facts = (
        Fact(
            "min_length",
            "threshold",
            options=(3, 4, 5, 6),
            default=3,
            keywords=("minimum", "short", "least", "fewest"),
            answer="Usernames need at least {v} characters.",
        ),
        Fact(
            "max_length",
            "threshold",
            options=(16, 10, 12, 20),
            default=16,
            keywords=("maximum", "long", "most", "longest"),
            answer="Usernames can have at most {v} characters.",
        ),
        Fact(
            "charset",
            "rule",
            options=tuple(_CHARSETS),
            default="alnum_underscore",
            keywords=("allowed", "characters", "symbols", "underscore", "digits", "dots"),
            answer=lambda v: f"Allow {_CHARSETS[v][1]}.",
        ),
        Fact(
            "start_letter",
            "rule",
            options=(False, True),
            default=False,
            keywords=("start", "begin", "first", "leading"),
            answer=lambda v: (
                "The username must start with a letter."
                if v
                else "It doesn't matter what the first character is."
            ),
        ),
        Fact(
            "output",
            "return_format",
            options=("bool", "reason"),
            default="bool",
            keywords=("return", "reason", "message", "explain", "bool"),
            answer=lambda v: (
                "Just return True or False."
                if v == "bool"
                else "Return 'ok' if valid, else the first failing reason among 'too short', "
                "'too long', 'invalid characters', 'must start with a letter', in that order."
            ),
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        def fail(reason: str) -> str:
            return f"return {reason!r}" if v["output"] == "reason" else "return False"

        lines = [
            "import re",
            f"if len(username) < {v['min_length']}:",
            f"    {fail('too short')}",
            f"if len(username) > {v['max_length']}:",
            f"    {fail('too long')}",
            f'if not re.fullmatch(r"[{_CHARSETS[v["charset"]][0]}]+", username):',
            f"    {fail('invalid characters')}",
        ]
        if v["start_letter"]:
            lines += ["if not username[:1].isalpha():", f"    {fail('must start with a letter')}"]
        lines.append("return 'ok'" if v["output"] == "reason" else "return True")
        return "\n".join(lines)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        def name(n: int) -> str:
            rest = "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(n))
            return rng.choice(string.ascii_lowercase) + rest[: n - 1]

        rows = [(name(n),) for n in range(1, 23)]
        extra = "JohnDoe1 john_doe john.doe jo-hn99 1johnny _johnny jane@mail Alice_B 9lives_x"
        extra += " bob.smith_ Zed ab"
        return [*rows, *((u,) for u in extra.split()), ("john doe",), ("",)]


class TruncateText(Family):
    name = "truncate_text"
    domain = "text"
    function_names = ("truncate", "truncate_text", "shorten_text")
    params = ("text", "max_length")
    descriptions = (
        "I need a function that shortens long text to a maximum length for previews.",
        "Can you write something that truncates a description so it fits in a small card?",
        "Write a python function to cut text down to size with an ellipsis when it's too long.",
    )
    facts = (
        Fact(
            "ellipsis",
            "rule",
            options=("...", "\u2026", " ...", "..", " [more]"),
            default="...",
            keywords=("ellipsis", "dots", "marker", "append", "indicate"),
            answer=lambda v: f"Mark a cut with the string {v!r}.",
        ),
        Fact(
            "word_boundary",
            "boundary",
            options=(False, True),
            default=False,
            keywords=("word", "middle", "boundary", "whole", "split"),
            answer=lambda v: (
                "Never cut in the middle of a word: back up to just after the last space."
                if v
                else "Cutting in the middle of a word is fine."
            ),
        ),
        Fact(
            "count_ellipsis",
            "rule",
            options=(True, False),
            default=True,
            keywords=("count", "include", "total", "toward", "exceed"),
            answer=lambda v: (
                "The ellipsis counts toward the maximum, so the result is never "
                "longer than max_length."
                if v
                else "Keep max_length characters of text and add the ellipsis on top of that."
            ),
        ),
        Fact(
            "trim",
            "rule",
            options=("spaces", "punct", "none"),
            default="spaces",
            keywords=("trailing", "trim", "punctuation", "comma", "strip"),
            answer=lambda v: {
                "spaces": "Remove trailing spaces before adding the ellipsis, but keep "
                "punctuation.",
                "punct": "Remove trailing spaces and punctuation like , . ; : ! ? - before "
                "adding the ellipsis.",
                "none": "Don't trim anything before the ellipsis, not even spaces.",
            }[v],
        ),
        Fact(
            "whitespace",
            "edge_case",
            options=("keep", "trim", "collapse"),
            default="keep",
            keywords=("whitespace", "newlines", "tabs", "collapse", "double", "ends"),
            answer=lambda v: {
                "keep": "Leave the whitespace exactly as it is.",
                "trim": "First trim spaces and newlines off both ends, but keep inner "
                "spacing as is.",
                "collapse": "First squash runs of spaces, tabs or newlines into single spaces "
                "and trim the ends.",
            }[v],
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        e = v["ellipsis"]
        trim = {
            "spaces": "cut = cut.rstrip()",
            "punct": 'cut = cut.rstrip(" ,.;:!?-")',
            "none": "",
        }[v["trim"]]
        lines = {
            "keep": [],
            "trim": ["text = text.strip()"],
            "collapse": ['text = " ".join(text.split())'],
        }[v["whitespace"]]
        lines += [
            "if len(text) <= max_length:",
            "    return text",
            f"keep = max(max_length - {len(e)}, 0)" if v["count_ellipsis"] else "keep = max_length",
            "cut = text[:keep]",
        ]
        if v["word_boundary"]:
            lines += [
                'if text[keep:keep + 1] != " " and " " in cut:',
                '    cut = cut[:cut.rfind(" ") + 1]',
            ]
        lines += [trim, f"return cut + {e!r}"]
        return "\n".join(line for line in lines if line)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        texts = [
            "The quick brown fox jumps over the lazy dog, then naps in the warm sun.",
            "Hello there, my good friend and welcome to the show tonight!",
            "Fresh bread, baked daily. Order online; pick up in store - easy!",
            "Supercalifragilisticexpialidocious is quite a long word to type.",
            "Short note.",
            "Line one\nline two\n\nline  three with   gaps here",
        ]
        rows = [(rng.choice(texts), rng.randint(8, 60)) for _ in range(24)]
        pad = len(v["ellipsis"]) if v["count_ellipsis"] else 0
        rows += [(texts[1], 12 + pad), (texts[1], 13 + pad), (texts[2], 6 + pad),
                 (texts[2], 7 + pad), (texts[2], 28 + pad), (texts[2], 27 + pad)]  # fmt: skip
        return [*rows, ("Hi  there", 40), ("  padded text  ", 40), ("tab\there", 40),
                ("", 10), ("exactly ten", 11), ("exactly eleven", 13), (texts[3], 20),
                (texts[0], 30)]  # fmt: skip


_STOPWORDS = ("the", "a", "an", "and", "of", "to", "is", "in", "it", "which", "there")


class TopWord(Family):
    name = "top_word"
    domain = "text"
    function_names = ("most_common_word", "top_word", "most_frequent_word")
    params = ("text",)
    descriptions = (
        "I need a function that finds the most frequent word in a piece of text.",
        "Can you write something that tells me which word shows up most in a document?",
        "Write a python function to get the most common word from some text.",
    )
    facts = (
        Fact(
            "case",
            "case",
            options=("lower", "first_form", "sensitive"),
            default="lower",
            keywords=("case", "capital", "uppercase", "lowercase", "capitalized"),
            answer=lambda v: {
                "lower": "Ignore case: 'The' and 'the' are the same word, returned in lowercase.",
                "first_form": "Ignore case when counting, but return the word as it was "
                "first written in the text.",
                "sensitive": "'The' and 'the' are different words; return the word as written.",
            }[v],
        ),
        Fact(
            "tie_break",
            "tie_break",
            options=("first_seen", "alphabetical", "first_to_reach"),
            default="first_seen",
            keywords=("tie", "tied", "equal", "same", "alphabetical"),
            answer=lambda v: {
                "first_seen": "On a tie, pick the word that appears first in the text.",
                "alphabetical": "On a tie, pick the alphabetically first word.",
                "first_to_reach": "On a tie, pick the word that reached the top count first "
                "while reading the text.",
            }[v],
        ),
        Fact(
            "min_length",
            "threshold",
            options=(1, 2, 3, 4, 5),
            default=1,
            keywords=("short", "length", "letters", "tiny", "minimum"),
            answer=lambda v: (
                "Count words of any length."
                if v == 1
                else f"Ignore words shorter than {v} letters."
            ),
        ),
        Fact(
            "stop_words",
            "rule",
            options=(False, True),
            default=False,
            keywords=("stop", "common", "filler", "skip", "ignore"),
            answer=lambda v: (
                f"Skip the filler words {', '.join(_STOPWORDS)} (any case)."
                if v
                else "Every word counts, even filler words like 'the'."
            ),
        ),
        Fact(
            "output",
            "return_format",
            options=("word", "tuple", "dict"),
            default="word",
            keywords=("return", "count", "tuple", "dict", "output"),
            answer=lambda v: {
                "word": "Return just the word ('' if there are no words).",
                "tuple": "Return a (word, count) tuple (('', 0) if there are no words).",
                "dict": "Return a dict {'word': word, 'count': count} (word '' and count 0 "
                "if there are no words).",
            }[v],
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        ret = {"word": "{w}", "tuple": "({w}, {n})", "dict": "{{'word': {w}, 'count': {n}}}"}
        ret = ret[v["output"]]
        lines = ["import re", 'words = re.findall(r"[A-Za-z]+", text)']
        if v["case"] == "first_form":
            lines += ["forms = {}", "for w in words:", "    forms.setdefault(w.lower(), w)"]
        if v["case"] != "sensitive":
            lines.append("words = [w.lower() for w in words]")
        if v["min_length"] > 1:
            lines.append(f"words = [w for w in words if len(w) >= {v['min_length']}]")
        if v["stop_words"]:
            lines.append(
                f"words = [w for w in words if w.lower() not in {_set_literal(_STOPWORDS)}]"
            )
        pick = {
            "first_seen": "tied[0]",
            "alphabetical": "min(tied)",
            "first_to_reach": "next(w for i, w in enumerate(words) "
            "if words[: i + 1].count(w) == best)",
        }[v["tie_break"]]
        lines += [
            "if not words:",
            "    return " + ret.format(w="''", n=0),
            "counts = {}",
            "for w in words:",
            "    counts[w] = counts.get(w, 0) + 1",
            "best = max(counts.values())",
            "tied = [w for w in counts if counts[w] == best]",
            f"word = {pick}",
            "word = forms[word]" if v["case"] == "first_form" else "",
            "return " + ret.format(w="word", n="best"),
        ]
        return "\n".join(line for line in lines if line)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        vocab = "the The a is it cat dog Dog ox bird zebra apple Apple go run of and sun I x"
        vocab = [*vocab.split(), "which", "there"]
        rows = [
            (" ".join(rng.choice(vocab) for _ in range(rng.randint(3, 14))),) for _ in range(26)
        ]
        texts = (
            "|!!! ???|The cat and the dog. The end.|zebra apple zebra apple|Dog dog DOG cat cat"
            "|Apple apple apple zebra|The dog the cat the|Zebra zebra cat cat Cat"
            "|Which dog which sun which|ox dog ox dog|zebra apple apple zebra"
            "|apple zebra zebra apple|cat dog dog cat|Zebra apple apple Zebra|a a a ox ox bird"
            "|is is it it the the cat|go go go apple apple|The The the cat cat|I I I x dog dog"
            "|which which there dog|There there which zebra zebra"
        )
        return [*rows, *((t,) for t in texts.split("|"))]


_PATTERNS = {
    "(555) 123-4567": "({a}) {b}-{c}",
    "555-123-4567": "{a}-{b}-{c}",
    "555.123.4567": "{a}.{b}.{c}",
    "555 123 4567": "{a} {b} {c}",
    "5551234567": "{a}{b}{c}",
}


class FormatPhone(Family):
    name = "format_phone"
    domain = "text"
    function_names = ("format_phone", "format_phone_number", "pretty_phone")
    params = ("phone",)
    descriptions = (
        "I need a function that formats a phone number nicely from what the user typed.",
        "Can you write something that cleans up phone numbers for our customer records?",
        "Write a python function to turn a string of phone digits into a readable number.",
    )
    facts = (
        Fact(
            "pattern",
            "return_format",
            options=tuple(_PATTERNS),
            default="(555) 123-4567",
            keywords=("format", "look", "parentheses", "dashes", "pattern", "style"),
            answer="Format ten-digit numbers like {v}.",
        ),
        Fact(
            "country",
            "rule",
            options=("keep", "plain", "strip", "invalid"),
            default="keep",
            keywords=("country", "code", "leading", "eleven", "plus"),
            answer=lambda v: {
                "keep": "An 11-digit number starting with 1 keeps its country code, shown as "
                "'+1 ' in front.",
                "plain": "An 11-digit number starting with 1 keeps the 1, shown as '1 ' in front.",
                "strip": "An 11-digit number starting with 1 just has the leading 1 dropped.",
                "invalid": "An 11-digit number is invalid, even with a leading 1.",
            }[v],
        ),
        Fact(
            "local",
            "edge_case",
            options=("invalid", "local"),
            default="invalid",
            keywords=("seven", "local", "area", "without", "short"),
            answer=lambda v: (
                "A 7-digit number without an area code is invalid."
                if v == "invalid"
                else "A 7-digit local number is fine and comes out as 123-4567."
            ),
        ),
        Fact(
            "invalid",
            "edge_case",
            options=("invalid", "", "original"),
            default="invalid",
            keywords=("invalid", "bad", "wrong", "error", "length"),
            answer=lambda v: (
                "For an invalid number return the original input unchanged."
                if v == "original"
                else f"For an invalid number return {v!r}."
            ),
        ),
        Fact(
            "symbols",
            "rule",
            options=("strip", "punct_ok", "reject"),
            default="strip",
            keywords=("symbols", "characters", "spaces", "clean", "typed", "letters"),
            answer={
                "strip": "Ignore any characters that aren't digits.",
                "punct_ok": "Spaces, dashes, dots, parentheses and '+' are ignored, but anything "
                "else, like letters, makes the number invalid.",
                "reject": "If the input has anything other than digits, it's invalid.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        bad = "phone" if v["invalid"] == "original" else repr(v["invalid"])
        lines = ['digits = "".join(ch for ch in phone if ch.isdigit())']
        if v["symbols"] == "reject":
            lines += ["if digits != phone:", f"    return {bad}"]
        if v["symbols"] == "punct_ok":
            lines += ['if any(not ch.isdigit() and ch not in " -.()+" for ch in phone):',
                      f"    return {bad}"]  # fmt: skip
        if v["local"] == "local":
            lines += ["if len(digits) == 7:", '    return digits[:3] + "-" + digits[3:]']
        prefix = "''"
        if v["country"] == "invalid":
            lines += ["if len(digits) != 10:", f"    return {bad}"]
        else:
            lines += ['if len(digits) == 11 and digits[0] == "1":', "    digits = digits[1:]"]
            if v["country"] in ("keep", "plain"):
                one = "+1 " if v["country"] == "keep" else "1 "
                lines += [f"    prefix = {one!r}", "else:", '    prefix = ""']
                prefix = "prefix"
            lines += ["if len(digits) != 10:", f"    return {bad}"]
        fmt = _PATTERNS[v["pattern"]]
        lines += [
            "a, b, c = digits[:3], digits[3:6], digits[6:]",
            f"return {prefix} + f{fmt!r}" if prefix != "''" else f"return f{fmt!r}",
        ]
        return "\n".join(lines)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        def digits(n: int) -> str:
            return str(rng.randint(2, 9)) + "".join(str(rng.randint(0, 9)) for _ in range(n - 1))

        rows = [(digits(10),) for _ in range(10)] + [("1" + digits(10),) for _ in range(4)]
        d = digits(10)
        odd = [f"{d[:3]}-{d[3:6]}-{d[6:]}", f"({d[:3]}) {d[3:6]} {d[6:]}", f"+1 {d}", f"1{d}",
               f"2{d}", digits(7), f"{d[3:6]}-{d[6:]}", digits(9), digits(12), "",
               "555-CALL-NOW", f"{d} ext", f"tel:{d}", f"1-{d[:3]}-{d[3:6]}-{d[6:]}",
               digits(11)]  # fmt: skip
        return [*rows, *((p,) for p in odd)]


FAMILIES: tuple[Family, ...] = (
    TitleSlug(), FormatPersonName(), CensorWords(), ValidateUsername(), TruncateText(), TopWord(),
    FormatPhone(),
)  # fmt: skip
