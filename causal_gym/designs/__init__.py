"""What a design family (iv, did, rdd) hands the generator: a staged table, its data
dictionary and the truth, built from a model of its own (no backdoor SCM), and the one
README layout they all share."""
