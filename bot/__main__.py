from bot.commands.main import main

raise SystemExit(main())
