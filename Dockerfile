# batsched-py: the scheduler side of a real-Batsim simulation (see docker-compose.yml).
#   docker build -t batsched-py:local .
#   docker run --rm batsched-py:local list-schedulers
# Stage 1 builds wheels for the package and its dependencies (all have binary wheels for
# CPython 3.11, so no compiler is needed); stage 2 installs only those wheels, so the final
# image holds neither the sources' build leftovers nor pip's cache.
FROM python:3.11-slim AS build
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY --from=build /wheels /tmp/wheels
RUN pip install --no-cache-dir --no-index --find-links /tmp/wheels batsched_py \
    && rm -rf /tmp/wheels \
    && useradd --create-home --uid 10001 --user-group batsched
USER batsched
WORKDIR /home/batsched
EXPOSE 28000
ENTRYPOINT ["batsched-py"]
# Inside a container the socket must bind 0.0.0.0 to be reachable from another container;
# publish the port only on a private network (docker-compose.yml publishes none).
CMD ["serve", "--scheduler", "easy", "--socket", "tcp://0.0.0.0:28000"]
