from causal_gym.cli import main

main()
