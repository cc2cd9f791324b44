# The Docker sandbox's analyst image: a Python 3.11 base plus the pinned analyst
# toolchain (configs/analyst-requirements.txt) in /opt/analyst, installed offline from
# a wheelhouse in the build context (`wheels/`, which causal-gym-run fetches on the
# host), so the build needs no network, no registry mirror and no proxy's certificates.
#
# causal-gym-run builds it from this file (orchestrator/sandbox/docker_image.py), once
# per base image and pin set, tagged causal-gym-analyst:<pins>-<base>:
#   causal-gym-run sandbox setup --sandbox docker [--image BASE]
# and a Kubernetes worker group can pull that image from a registry (docs: Kubernetes).
ARG BASE=python:3.11-slim
FROM ${BASE}
ARG AGENT_UID=1000
COPY wheels /tmp/causal-gym-wheels
RUN python3 -m venv /opt/analyst \
 && /opt/analyst/bin/pip install --quiet --no-index --find-links /tmp/causal-gym-wheels \
      --requirement /tmp/causal-gym-wheels/requirements.txt \
 && /opt/analyst/bin/python -c "import numpy, pandas, scipy, statsmodels, sklearn" \
 && rm -rf /tmp/causal-gym-wheels \
 && mkdir -p /workspace && chown ${AGENT_UID}:${AGENT_UID} /workspace
ENV PATH=/opt/analyst/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/workspace LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 MPLBACKEND=Agg \
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
WORKDIR /workspace
