"""A tiny Gluon network and a training loop shared by the MXNet hook tests. Blocks get explicit
prefixes, so that parameter names do not depend on how many blocks the process made before."""
import mxnet as mx
from mxnet import autograd, gluon, nd


def make_net(prefix="net_", seed=0, sigmoid=False, scale=1.0):
    mx.random.seed(seed)
    net = gluon.nn.Sequential(prefix=prefix)
    with net.name_scope():
        net.add(gluon.nn.Dense(8, in_units=4, activation="sigmoid" if sigmoid else "relu", prefix="fc1_"))
        net.add(gluon.nn.Dense(3, in_units=8, prefix="fc2_"))
    net.initialize(mx.init.Xavier())
    if scale != 1.0:
        w = net[0].weight
        w.set_data(w.data() * scale)
        net[0].bias.set_data(nd.zeros_like(net[0].bias.data()))
    return net


LOSS = "softmaxcrossentropyloss0"  # the name Gluon gives the first such loss block


def data(n=16, seed=0):
    mx.random.seed(seed)
    return nd.random.normal(shape=(n, 4)), nd.array([i % 3 for i in range(n)])


def train(hook, steps, net=None, seed=0, record=None, loss_fn=None):
    """Trains net with hook registered on it and on a SoftmaxCrossEntropyLoss. record (a dict)
    receives per step the parameters after the step's update, the gradients and the loss."""
    net = net or make_net(seed=seed)
    loss_fn = loss_fn or gluon.loss.SoftmaxCrossEntropyLoss(prefix=LOSS + "_")
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    hook.register_block(net)
    hook.register_block(loss_fn)
    x, y = data(seed=seed)
    for step in range(steps):
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        grads = {p.name: p.grad().asnumpy().copy() for p in net.collect_params().values()}
        trainer.step(x.shape[0])
        if record is not None:
            record[step] = {"params": {p.name: p.data().asnumpy().copy() for p in net.collect_params().values()},
                            "grads": grads, "loss": loss.asnumpy().copy()}
    return net
