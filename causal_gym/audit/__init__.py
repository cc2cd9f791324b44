"""The anti-hack audit: honest reference versus every cheap way to game the reward."""
