"""Hidden structural causal models: build, sample, certify."""

from causal_gym.scm.build import build_scm
from causal_gym.scm.certify import Certificate, certify
from causal_gym.scm.identification import backdoor_graph, satisfies_backdoor
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Edge, Kind, Node, Role, Scm, Timing
from causal_gym.scm.sample import CleanSample, sample_clean

__all__ = [
    "OUTCOME_ID",
    "TREATMENT_ID",
    "Certificate",
    "CleanSample",
    "Edge",
    "Kind",
    "Node",
    "Role",
    "Scm",
    "Timing",
    "backdoor_graph",
    "build_scm",
    "certify",
    "sample_clean",
    "satisfies_backdoor",
]
