"""The game: rules in play, computer opponents, the terminal front end and the simulator."""
