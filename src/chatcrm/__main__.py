from chatcrm.cli import main

main()
