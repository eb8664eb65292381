"""Streamlit helpers shared by the pages (thin: no scoring logic here).

Imported before torch by every page, so it sets the dashboard's OpenMP wait policy: with spinning
(active) waits, torch's worker threads slow each model pass about tenfold whenever other processes
share a small CPU; passive waits cost next to nothing on an idle one. An explicit setting wins.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
