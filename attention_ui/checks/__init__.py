"""Each lesson page's check-yourself questions, made from the page's own numbers where it has them.

A function per page returns a list of ``attention_ui.questions.Question`` (made with ``numeric`` and ``choice``,
their stage the page's url path); the page passes it to ``show_page_questions``.
"""
