"""``python -m scwo_np.cli``: the ``scwo`` command."""

import sys

from .main import main

sys.exit(main())
