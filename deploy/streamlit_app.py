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
else:  # imported once by `streamlit run`, before any visitor arrives: served as app.py is
    import streamlit as st

    from attention_ui.serving import lifespan, prepare_server

    prepare_server()  # st.navigation only, warmed up
    app = st.App(__file__, lifespan=lifespan)  # found by `streamlit run` in this source; lifespan: TCP_NODELAY
