import type { ModelService } from '../llm/models/model-service.ts';
import { managesHousehold } from '../people/rights.ts';
import type { HearthEventHub } from './hearth-events.ts';

/** Says what the model service does on the events socket: pulls to those who may pull, the rest to every page. */
export function announceModels(models: ModelService, events: HearthEventHub): void {
  models.on('pull', (state) => events.publish({ type: 'model_pull', ...state }, managesHousehold));
  models.on('loading', (loading) => events.publish({ type: 'model_loading', ...loading }));
  models.on('changed', () => events.publish({ type: 'models_changed' }));
}
