#!/usr/bin/env bash
# Untagged sibling: the B300 launcher prefers the framework-tagged script, never this one.
vllm serve decoy/should-not-be-picked
