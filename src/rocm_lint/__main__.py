from rocm_lint.cli import main

raise SystemExit(main())
