package org.switchml.control;

import java.util.List;
import org.switchml.protocol.JobSpec;

/**
 * A job as a controller installed it.
 *
 * @param spec        what the workers use
 * @param resources   the switch resources it holds
 * @param attachments per rank, where the worker hangs off the switch (empty for the software switch)
 */
public record RegisteredJob(JobSpec spec, JobResources resources, List<WorkerAttachment> attachments) {

    public RegisteredJob {
        attachments = List.copyOf(attachments);
    }
}
