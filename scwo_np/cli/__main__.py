"""``python -m scwo_np.cli``: the ``scwo`` command."""

import sys

from ._main import main

sys.exit(main())
