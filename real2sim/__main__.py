if __name__ == "__main__":  # not on import: spawned worker processes import this module as ``__mp_main__``
    from real2sim.cli import main

    main()
