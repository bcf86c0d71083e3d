import sys

from torchx.runtime.function._entry import main

sys.exit(main())
