"""Entry point for Streamlit Community Cloud: the same app as ``app.py``.

Community Cloud reads the dependency file beside the entry point before the one at the repository
root, so deploying this file installs ``deploy/requirements.txt``: CPU-only torch and the packaged
model. Everywhere else (laptops, CI) the root ``requirements.txt`` is used and ``app.py`` is run.
``deploy/pages`` links to the lessons in ``pages/``.
"""

import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

if __name__ == "__main__":
    runpy.run_path(str(ROOT / "app.py"), run_name="__main__")
else:
    # Served as an st.App, as app.py is, so no first visit is routed as a legacy pages-folder app.
    import streamlit as st
    from streamlit.runtime.pages_manager import PagesManager

    PagesManager.uses_pages_directory = False
    from attention_ui.serving import lifespan
    from attention_ui.warm_up import warm_up

    app = st.App(__file__, lifespan=lifespan)  # lifespan: TCP_NODELAY on the server's socket

    warm_up()  # before the server answers its health check: no visitor meets a cold server
